package blob

import (
	"testing"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// SetChannelsLast needs a reduced storage and images, channels and
// positions; an access tells the memories the blob's current dims, and
// turning it off returns them to row-major.
func TestSetChannelsLast(t *testing.T) {
	b, err := New[float32](2, 8, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetChannelsLast(true); err == nil {
		t.Error("native storage taken channels-last")
	}
	if err := b.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := b.SetChannelsLast(true); err != nil {
		t.Fatal(err)
	}
	if n, c, s := b.Data().ChannelsLast(); n != 2 || c != 8 || s != 15 || !b.ChannelsLast() {
		t.Errorf("data channels-last %d, %d, %d; want 2, 8, 15", n, c, s)
	}
	if err := b.Reshape([]int{1, 8, 3, 5}); err != nil {
		t.Fatal(err)
	}
	b.CPUDiff()
	if n, c, s := b.Diff().ChannelsLast(); n != 1 || c != 8 || s != 15 {
		t.Errorf("after a smaller reshape, diff channels-last %d, %d, %d; want 1, 8, 15", n, c, s)
	}
	if err := b.SetChannelsLast(false); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := b.Data().ChannelsLast(); n != 0 || b.ChannelsLast() {
		t.Errorf("off: data still channels-last (%d images)", n)
	}
	flat, _ := New[float32](2, 8)
	if err := flat.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := flat.SetChannelsLast(true); err == nil {
		t.Error("a blob of two axes taken channels-last")
	}
}
