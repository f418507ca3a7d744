package vision_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

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
