package datalayer

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// TestPrefetchOnDevice: GPU-mode batches are pinned, reach Forward already
// on the device, and Forward's tops share their device memory and give the
// loaded values; Close releases the stream and events.
func TestPrefetchOnDevice(t *testing.T) {
	dev := cudatest.Device(t)
	for _, ahead := range []int{0, 3} {
		var b layer.Base[float32]
		b.SetContext(device.New(dev))
		f := newFakeLoader()
		p, err := newPrefetcher[float32](&b, f, ahead, []int{4, 5}, []int{4})
		if err != nil {
			t.Fatal(err)
		}
		top := []*blob.Blob[float32]{mustBlob(t), mustBlob(t)}
		for _, tb := range top {
			tb.SetDevice(dev)
		}
		for want := range 7 {
			bt, err := p.next()
			if err != nil {
				t.Fatal(err)
			}
			if h := bt.data.Data().Head(); h != syncedmem.Synced || !bt.data.Data().Pinned() {
				t.Fatalf("ahead %d: a ready batch is %v, pinned %v; want SYNCED and pinned", ahead, h, bt.data.Data().Pinned())
			}
			p.release(bt)
			// The batch went back: run the layer's GPU forward on the next one.
			if err := forwardBatchGPU(p, top); err != nil {
				t.Fatal(err)
			}
			// The tops read the batch's device memory: no copy.
			cur := p.dev.current
			for i, pair := range [][2]*blob.Blob[float32]{{top[0], cur.data}, {top[1], cur.label}} {
				topPtr, err1 := pair[0].GPUData()
				batchPtr, err2 := pair[1].GPUData()
				if err1 != nil || err2 != nil || topPtr != batchPtr {
					t.Fatalf("ahead %d, pass %d: top %d at %#x, batch at %#x (%v, %v); want the batch's memory", ahead, want, i, topPtr, batchPtr, err1, err2)
				}
			}
			for _, v := range top[0].CPUData() {
				if v != float32(2*want+1) {
					t.Fatalf("ahead %d, pass %d: top holds %v, want %d", ahead, want, v, 2*want+1)
				}
			}
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
		if p.dev.stream != nil {
			t.Error("the prefetch stream was not released")
		}
	}
}
