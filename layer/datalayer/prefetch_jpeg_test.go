package datalayer

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestJPEGShareBalances: nvJPEG's share of a batch starts at half; while
// the layer waits for batches it moves towards the share at which the
// device and the host take the same time, never leaving the device
// without an image nor the host without a chance, and offering the host
// work when it had none to measure; while the layer does not wait, it
// shrinks towards the host doing it all.
func TestJPEGShareBalances(t *testing.T) {
	var waits atomic.Int64
	j := jpegDevice{waits: &waits}
	if k := j.deviceShare(256); k != 128 {
		t.Errorf("first batch: nvJPEG takes %d of 256, want 128", k)
	}
	// The device decodes 128 in 10 ms, the host 128 in 30 ms: the device
	// is three times as fast, so the share that balances them is 3/4.
	for range 20 {
		waits.Add(1) // the layer waited for every batch
		k := j.deviceShare(256)
		j.balance(k, 256-k, time.Duration(k)*10*time.Millisecond/128, time.Duration(256-k)*30*time.Millisecond/128)
	}
	if k := j.deviceShare(256); k < 188 || k > 196 {
		t.Errorf("after 20 batches with the device three times as fast: nvJPEG takes %d of 256, want about 192", k)
	}
	if k := j.deviceShare(1); k != 1 {
		t.Errorf("a batch of one: nvJPEG takes %d, want 1", k)
	}
	j.share = 1
	waits.Add(1)
	j.balance(256, 0, 10*time.Millisecond, 0)
	if j.share >= 1 {
		t.Errorf("with no host images to measure the share stays %v, want it lowered", j.share)
	}
	for range 1000 {
		waits.Add(1)
		j.balance(1, 255, time.Second, time.Millisecond)
	}
	if j.share < 0.01 {
		t.Errorf("a slow device: share %v, want at least 0.01", j.share)
	}
	// A layer that no longer waits hands the decoding back to the host.
	j.share = 0.8
	for range 200 {
		j.balance(200, 56, 10*time.Millisecond, 10*time.Millisecond)
	}
	if k := j.deviceShare(256); k > 3 {
		t.Errorf("after 200 batches the layer did not wait for: nvJPEG takes %d of 256, want at most 3", k)
	}
}
