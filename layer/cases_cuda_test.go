//go:build cuda

package layer_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// TestGradientsOnGPU runs every gradient case with the layer on the GPU.
func TestGradientsOnGPU(t *testing.T) {
	dev := cudatest.Device(t)
	onGPU := func(l layer.Layer[float64], blobs []*blob.Blob[float64]) {
		l.LayerBase().SetDevice(dev)
		for _, b := range blobs {
			b.SetDevice(dev)
		}
	}
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) { runGradCase(t, c, onGPU) })
	}
}

// TestGPUParity runs every parity case in float32 and float64.
func TestGPUParity(t *testing.T) {
	for _, c := range parityCases {
		name := layertest.Param(t, c.Layer).GetType()
		t.Run(name+"/float32", func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
		t.Run(name+"/float64", func(t *testing.T) { layertest.CheckGPUParity[float64](t, c) })
	}
}
