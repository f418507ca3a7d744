package vision_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
	"github.com/gocaffe/gocaffe/settings"
)

// Convolutions match the CPU through cuBLAS GEMMs of our own (the
// ConvGEMM setting gemm, GOCAFFE_CONV_GEMM=gemm), through cuDNN alone, and
// with each pass timed both ways. The 1x1 way: groups, two bottoms (the weight gradient
// accumulating), three spatial axes, no bias, strides (even and odd sizes,
// unequal strides), and the partial weight gradients of 2 images at a time
// over a batch of 3. Other kernels, and 1x1 kernels with padding or a
// stride in 3-D, have no GEMM way.
func TestCuDNNConvGEMMWays(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	cases := []struct {
		way string
		layertest.Parity
	}{
		{"pointwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 1 group: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 5, 7}}, Tol: 1e-3}},
		{"pointwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d" convolution_param { num_output: 5 kernel_size: 1 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 3, 5, 7}, {3, 3, 5, 7}}, Tol: 1e-3}},
		{"pointwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 1 bias_term: false engine: CUDNN
			weight_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 6, 4, 5, 3}}, Tol: 1e-3}},
		{"pointwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 5 kernel_size: 1 stride: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 7, 6}}, Tol: 1e-3}},
		{"pointwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 1 stride_h: 2 stride_w: 3 group: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 6, 5, 8}}, Tol: 1e-3}},
		{"", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2 dilation: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 11, 9}}, Tol: 1e-3}},
		{"", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 1 pad: 1 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 2, 4, 5}}, Tol: 1e-3}},
		{"", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 1 stride: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 2, 4, 5, 6}}, Tol: 1e-3}},
	}
	for _, mode := range []string{"gemm", "cudnn", "auto"} {
		s, err := settings.FromLookup(func(name string) (string, bool) { return mode, name == "GOCAFFE_CONV_GEMM" })
		if err != nil {
			t.Fatal(err)
		}
		ctx.SetSettings(s)
		for i, c := range cases {
			c.Context = ctx
			l := layertest.New[float32](t, c.Layer)
			l.LayerBase().SetContext(ctx)
			bottoms := make([]*blob.Blob[float32], len(c.Bottom))
			for j, s := range c.Bottom {
				bottoms[j] = layertest.Blob[float32](t, s...)
				bottoms[j].SetDevice(ctx.Device())
			}
			layertest.SetUp(t, l, bottoms, layertest.Blobs[float32](t, len(c.Bottom)))
			way, use := vision.ConvGEMMWay(l)
			if way != c.way {
				t.Errorf("case %d: way %q, want %q", i, way, c.way)
			}
			switch {
			case mode == "gemm" && c.way != "" && use != [3]bool{true, true, true}:
				t.Errorf("case %d, %s: GEMM passes %v, want all", i, mode, use)
			case (mode == "cudnn" || c.way == "") && use != [3]bool{}:
				t.Errorf("case %d, %s: GEMM passes %v, want none", i, mode, use)
			}
			// Two float32 images of case 0's weight gradient (one float64)
			// at a time; one image of the others.
			restore := vision.SetPointwiseBudget(2 * 6 * 4)
			t.Run(fmt.Sprintf("%s/%d/float32", mode, i), func(t *testing.T) { layertest.CheckGPUParity[float32](t, c.Parity) })
			c.Tol = 0
			t.Run(fmt.Sprintf("%s/%d/float64", mode, i), func(t *testing.T) { layertest.CheckGPUParity[float64](t, c.Parity) })
			restore()
		}
	}
	ctx.SetSettings(settings.Settings{})
	if _, err := settings.FromLookup(func(name string) (string, bool) { return "fast", name == "GOCAFFE_CONV_GEMM" }); err == nil || !strings.Contains(err.Error(), "GOCAFFE_CONV_GEMM") {
		t.Errorf("GOCAFFE_CONV_GEMM=fast: error %v, want one naming the variable", err)
	}
	bad := device.New(ctx.Device())
	bad.SetSettings(settings.Settings{ConvGEMM: 9})
	l := layertest.New[float32](t, cases[0].Layer)
	l.LayerBase().SetContext(bad)
	b := layertest.Blob[float32](t, 3, 4, 5, 7)
	b.SetDevice(bad.Device())
	if err := layer.SetUp(l, []*blob.Blob[float32]{b}, layertest.Blobs[float32](t, 1)); err == nil || !strings.Contains(err.Error(), "ConvGEMM setting") {
		t.Errorf("ConvGEMM setting 9: error %v, want one naming the setting", err)
	}
}
