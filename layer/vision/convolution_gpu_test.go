package vision_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
	"github.com/gocaffe/gocaffe/settings"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Convolutions match the CPU through cuBLAS GEMMs or depthwise kernels of
// our own (the ConvGEMM setting gemm, GOCAFFE_CONV_GEMM=gemm), through
// cuDNN alone, and with each pass timed both ways. The 1x1 way: groups, two bottoms (the weight gradient
// accumulating), three spatial axes, no bias, strides (even and odd sizes,
// unequal strides), and the partial weight gradients of 2 images at a time
// over a batch of 3. The lowered way of few channels (cases below).
// Grouped kernels of more than 1x1 and strided 1x1 kernels in 3-D have no
// GEMM way.
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
		// Depthwise: MobileNet's 3x3 at strides 1 and 2; a 3x5 kernel
		// with unequal strides, padding and dilation and no bias; and
		// 4,800 output pixels a channel, which cut the weight gradient
		// into two blocks a channel adding with atomics.
		{"depthwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 3 pad: 1 group: 4 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 7, 6}}, Tol: 1e-3}},
		{"depthwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 5 kernel_size: 3 pad: 1 stride: 2 group: 5 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 5, 9, 8}}, Tol: 1e-3}},
		{"depthwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_h: 3 kernel_w: 5 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 2 dilation: 2 group: 3 bias_term: false engine: CUDNN
			weight_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 11, 10}}, Tol: 1e-3}},
		{"depthwise", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 3 pad: 1 group: 3 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 48, 50}}, Tol: 1e-3}},
		{"", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2 dilation: 2 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 11, 9}}, Tol: 1e-3}},
		// Lowered: few channels, any kernel but a 1x1 the pointwise
		// way takes (a 1x1 with padding here); CaffeNet's conv1 in small
		// (11x11, stride 4); ResNet-50's (7x7, stride 2, padding 3) over
		// two bottoms; unequal strides, padding and dilation without
		// bias; and ten images, chunks of 8 and 2 (float32) or of 1
		// (float64, SetLoweredBudget below).
		{"lowered", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 1 pad: 1 engine: CUDNN
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 2, 4, 5}}, Tol: 1e-3}},
		{"lowered", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 11 stride: 4 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 3, 35, 31}}, Tol: 1e-3}},
		{"lowered", layertest.Parity{Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d" convolution_param { num_output: 5 kernel_size: 7 stride: 2 pad: 3 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 19, 17}, {2, 3, 19, 17}}, Tol: 1e-3}},
		{"lowered", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_h: 3 kernel_w: 5 stride_h: 2 stride_w: 3 pad_h: 2 pad_w: 1 dilation: 2 bias_term: false engine: CUDNN
			weight_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 2, 13, 16}}, Tol: 1e-3}},
		{"lowered", layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 5 stride: 2 pad: 1 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{10, 3, 13, 12}}, Tol: 1e-3}},
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
			l, _, _ := setUpOnDevice(t, ctx, c.Parity)
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
			restoreLowered := vision.SetLoweredBudget(1) // an image a chunk
			t.Run(fmt.Sprintf("%s/%d/float64", mode, i), func(t *testing.T) { layertest.CheckGPUParity[float64](t, c.Parity) })
			restoreLowered()
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

// The 1x1, depthwise and lowered ways in FLOAT16 and BFLOAT16 (x, y and the
// weights' copy in 16 bits, FP32 sums and an FP32 weight gradient) match
// the FP32 CPU, with
// its bottoms and tops stored in 16 bits and converted at the edges; the
// ConvGEMM setting gemm makes the engine take it for every pass after
// SetReduced, and auto times it against cuDNN's 16-bit algorithms.
func TestCuDNNConvGEMMWaysReduced(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	cases := []layertest.Parity{
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 1 group: 2 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 5, 7}}},
		{Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d" convolution_param { num_output: 5 kernel_size: 1 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 3, 5, 7}, {3, 3, 5, 7}}},
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 5 kernel_size: 1 stride: 2 bias_term: false engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } }`, Bottom: [][]int{{3, 4, 7, 6}}},
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 1 stride_h: 2 stride_w: 3 group: 2 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 6, 5, 8}}},
		// The depthwise kernels in 16 bits, the second cutting its
		// channels' weight gradients into parts.
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 5 kernel_size: 3 pad: 1 stride: 2 group: 5 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 5, 9, 8}}},
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 3 pad: 1 group: 3 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 48, 50}}},
		// The lowered way in 16 bits: CaffeNet's conv1 in small, and
		// nine images of a 7x7 with padding (chunks of 8 and 1).
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 11 stride: 4 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 3, 35, 31}}},
		{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 8 kernel_size: 7 stride: 2 pad: 3 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{9, 3, 15, 14}}},
	}
	defer ctx.SetSettings(settings.Settings{})
	for _, mode := range []string{"gemm", "auto"} {
		s, err := settings.FromLookup(func(name string) (string, bool) { return mode, name == "GOCAFFE_CONV_GEMM" })
		if err != nil {
			t.Fatal(err)
		}
		ctx.SetSettings(s)
		for i, c := range cases {
			for _, st := range []syncedmem.Storage{syncedmem.StorageFloat16, syncedmem.StorageBFloat16} {
				if mode == "gemm" {
					if use := reducedWay(t, ctx, c, st); use != [3]bool{true, true, true} {
						t.Errorf("case %d, %v: GEMM passes %v, want all", i, st, use)
					}
				}
				for _, stored := range []bool{false, true} {
					c := c
					c.Context, c.Reduced, c.StoreReduced, c.Tol = ctx, st, stored, 2e-2
					if st == syncedmem.StorageBFloat16 {
						c.Tol = 8e-2
					}
					restore := vision.SetPointwiseBudget(2 * 6 * 4) // two images' partial gradients at a time
					t.Run(fmt.Sprintf("%s/%d/%v/stored=%v", mode, i, st, stored), func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
					restore()
				}
			}
		}
	}
}

// setUpOnDevice sets a layer of c up on ctx's device, its bottoms and
// tops there too.
func setUpOnDevice(t *testing.T, ctx *device.Context, c layertest.Parity) (layer.Layer[float32], []*blob.Blob[float32], []*blob.Blob[float32]) {
	t.Helper()
	l := layertest.New[float32](t, c.Layer)
	l.LayerBase().SetContext(ctx)
	bottoms := make([]*blob.Blob[float32], len(c.Bottom))
	for j, s := range c.Bottom {
		bottoms[j] = layertest.Blob[float32](t, s...)
		bottoms[j].SetDevice(ctx.Device())
	}
	tops := layertest.Blobs[float32](t, len(c.Bottom))
	for _, b := range tops {
		b.SetDevice(ctx.Device())
	}
	layertest.SetUp(t, l, bottoms, tops)
	return l, bottoms, tops
}

// reducedWay sets a layer of c up on ctx, makes it compute in st and
// returns the passes it takes the GEMM way.
func reducedWay(t *testing.T, ctx *device.Context, c layertest.Parity, st syncedmem.Storage) [3]bool {
	t.Helper()
	l, bottoms, tops := setUpOnDevice(t, ctx, c)
	if err := layer.SetReduced(l, st); err != nil {
		t.Fatal(err)
	}
	if err := layer.Reshape(l, bottoms, tops); err != nil {
		t.Fatal(err)
	}
	_, use := vision.ConvGEMMWay(l)
	return use
}

// BenchmarkLoweredWay times the lowered way's parts (vision.LoweredParts)
// on the first layers it is for, CaffeNet's conv1 at batch 256 and
// ResNet-50's at 64, in BFLOAT16, row-major and channels-last, in
// milliseconds a run (run with -benchtime 1x: each run times its parts
// itself, on CUDA events).
func BenchmarkLoweredWay(b *testing.B) {
	ctx := device.New(cudatest.Device(b))
	if _, err := ctx.DNN(); err != nil {
		b.Skip(err)
	}
	s, err := settings.FromLookup(func(name string) (string, bool) { return "gemm", name == "GOCAFFE_CONV_GEMM" })
	if err != nil {
		b.Fatal(err)
	}
	ctx.SetSettings(s)
	shapes := []struct {
		name  string
		layer string
		shape []int
	}{
		{"caffenet_conv1", `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 96 kernel_size: 11 stride: 4 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" } }`, []int{256, 3, 227, 227}},
		{"resnet50_conv1", `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 64 kernel_size: 7 stride: 2 pad: 3 engine: CUDNN
			weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" } }`, []int{64, 3, 224, 224}},
	}
	for _, sh := range shapes {
		for _, cl := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/channels_last=%v", sh.name, cl), func(b *testing.B) {
				l := layertest.New[float32](b, sh.layer)
				l.LayerBase().SetContext(ctx)
				bottoms, tops := []*blob.Blob[float32]{layertest.Blob[float32](b, sh.shape...)}, layertest.Blobs[float32](b, 1)
				bottoms[0].SetDevice(ctx.Device())
				tops[0].SetDevice(ctx.Device())
				if err := layer.SetUp(l, bottoms, tops); err != nil {
					b.Fatal(err)
				}
				if err := layer.SetReduced(l, syncedmem.StorageBFloat16); err != nil {
					b.Fatal(err)
				}
				if err := layer.SetChannelsLast(l, cl); err != nil {
					b.Fatal(err)
				}
				if err := layer.Reshape(l, bottoms, tops); err != nil {
					b.Fatal(err)
				}
				for range b.N {
					parts, err := vision.LoweredParts(l)
					if err != nil {
						b.Fatal(err)
					}
					for name, v := range parts {
						b.ReportMetric(v, name)
					}
				}
			})
		}
	}
}
