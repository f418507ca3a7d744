package vision_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
)

// The host passes without a column buffer (conv_panels.go) against the
// im2col ones, on two cores, image by image and batched: the tops bit for
// bit, the bottom gradients (another order of the sums where the flipped
// weights compute them) and the parameter gradients within rounding.
func TestPanelsMatchIm2col(t *testing.T) {
	for _, c := range []struct {
		param  string
		shape  []int
		noDown bool // no bottom gradient (a first layer)
	}{
		{"num_output: 32 kernel_size: 5 pad: 2", []int{4, 32, 16, 16}, false}, // CIFAR-10 quick's conv2, image by image
		{"num_output: 16 kernel_size: 5 pad: 2", []int{6, 8, 8, 8}, false},    // conv3's shape, batched
		{"num_output: 13 kernel_size: 3 pad: 1", []int{4, 3, 24, 24}, false},
		{"num_output: 9 kernel_size: 3 pad: 1", []int{8, 6, 10, 10}, false}, // batched
		{"num_output: 7 kernel_size: 3 pad: 0", []int{3, 5, 19, 17}, false},
		{"num_output: 6 kernel_size: 3 pad: 3 dilation: 2", []int{3, 4, 13, 11}, false},
		{"num_output: 5 kernel_h: 3 kernel_w: 5 pad_h: 1 pad_w: 0", []int{3, 4, 12, 14}, false},
		{"num_output: 4 kernel_size: 3 stride: 2 pad: 1", []int{3, 5, 23, 23}, false}, // forward only: the bottom gradient by col2im
		{"num_output: 300 kernel_size: 3 pad: 1", []int{2, 30, 20, 20}, false},        // second blocks of rows and of k
		{"num_output: 32 kernel_size: 5 pad: 2", []int{4, 3, 32, 32}, true},           // CIFAR-10 quick's conv1
		{"num_output: 8 kernel_size: 3 pad: 1", []int{6, 4, 6, 6}, true},              // batched
	} {
		t.Run(fmt.Sprint(c.param, c.shape), func(t *testing.T) {
			p := `type: "Convolution" convolution_param { ` + c.param + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`
			x := layertest.Blob[float32](t, c.shape...)
			layertest.FillGaussian(x, 0, 1, 41)
			var dxs, dws, dbs [2][]float32
			ys := twoRuns(t, p, x, [2]int{2, 2}, func(i int) func() { return vision.SetConvPanels(i == 1) },
				func(l layer.Layer[float32], y *blob.Blob[float32]) []float32 {
					top := append([]float32(nil), y.CPUData()...)
					layertest.FillGaussian(y, 0, 1, 42)
					copy(y.MutableCPUDiff(), y.CPUData())
					for _, b := range l.LayerBase().Blobs() {
						clear(b.MutableCPUDiff())
					}
					copy(x.MutableCPUDiff(), top) // stale values: the pass overwrites them
					layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{!c.noDown}, []*blob.Blob[float32]{x})
					i := 0
					if dxs[0] != nil {
						i = 1
					}
					dxs[i] = append([]float32(nil), x.CPUDiff()...)
					dws[i] = append([]float32(nil), l.LayerBase().Blobs()[0].CPUDiff()...)
					dbs[i] = append([]float32(nil), l.LayerBase().Blobs()[1].CPUDiff()...)
					return top
				})
			for j, v := range ys[1] {
				if w := ys[0][j]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("top %d: %v without columns, %v with", j, v, w)
				}
			}
			layertest.CheckClose(t, "bottom diff", dxs[1], dxs[0], 1e-4)
			layertest.CheckClose(t, "weight diff", dws[1], dws[0], 1e-4)
			layertest.CheckClose(t, "bias diff", dbs[1], dbs[0], 1e-5)
		})
	}
}
