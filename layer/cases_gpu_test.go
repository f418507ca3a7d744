package layer_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// TestGradientsOnGPU runs every gradient case with the layer on the GPU.
func TestGradientsOnGPU(t *testing.T) {
	dev := cudatest.Device(t)
	ctx := device.New(dev)
	onGPU := func(l layer.Layer[float64], blobs []*blob.Blob[float64]) {
		l.LayerBase().SetContext(ctx)
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

// TestConvolutionChunksOnGPU: with buffers bounded to two images, the
// batched GPU convolution works through chunks of 2, 2 and 1 images and
// still equals the CPU, grouped, strided, padded and dilated, with two
// bottoms sharing the weights.
func TestConvolutionChunksOnGPU(t *testing.T) {
	// One image: 36 column rows (2 groups of 2 channels x 3x3) by 8x6
	// output positions.
	ctx := device.New(cudatest.Device(t))
	ctx.SetConvWorkspaceElems(2*36*48 + 1)
	c := layertest.Parity{Context: ctx, Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d"
		convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2 dilation: 2
		weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{5, 4, 17, 13}, {5, 4, 17, 13}}}
	t.Run("float32", func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
	t.Run("float64", func(t *testing.T) { layertest.CheckGPUParity[float64](t, c) })
}
