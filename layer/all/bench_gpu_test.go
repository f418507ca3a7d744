package all_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
)

// BenchmarkLayersGPU runs the same layers on device 0, waiting for the
// device after each pass so the time is the device's.
func BenchmarkLayersGPU(b *testing.B) {
	dev := cudatest.Device(b)
	ctx := device.New(dev)
	onGPU := func(l layer.Layer[float32], blobs []*blob.Blob[float32]) {
		l.LayerBase().SetContext(ctx)
		for _, bl := range blobs {
			bl.SetDevice(dev)
		}
	}
	benchForwardBackward(b, onGPU, func() {
		if err := dev.Stream().Synchronize(); err != nil {
			b.Fatal(err)
		}
	})
}
