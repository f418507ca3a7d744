package layer_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/settings"
)

// withEngine returns the layer text with its type's engine field set to e;
// false for a type without one.
func withEngine(t *testing.T, text string, e layer.EngineName) (string, bool) {
	p := layertest.Param(t, text)
	switch p.GetType() {
	case "Convolution", "Deconvolution":
		if p.ConvolutionParam == nil {
			p.ConvolutionParam = &caffepb.ConvolutionParameter{}
		}
		p.ConvolutionParam.Engine = caffepb.ConvolutionParameter_Engine(e).Enum()
	case "Pooling":
		if p.PoolingParam == nil {
			p.PoolingParam = &caffepb.PoolingParameter{}
		}
		p.PoolingParam.Engine = caffepb.PoolingParameter_Engine(e).Enum()
	case "LRN":
		if p.LrnParam == nil {
			p.LrnParam = &caffepb.LRNParameter{}
		}
		p.LrnParam.Engine = caffepb.LRNParameter_Engine(e).Enum()
	case "ReLU":
		if p.ReluParam == nil {
			p.ReluParam = &caffepb.ReLUParameter{}
		}
		p.ReluParam.Engine = caffepb.ReLUParameter_Engine(e).Enum()
	case "Sigmoid":
		if p.SigmoidParam == nil {
			p.SigmoidParam = &caffepb.SigmoidParameter{}
		}
		p.SigmoidParam.Engine = caffepb.SigmoidParameter_Engine(e).Enum()
	case "Softmax":
		if p.SoftmaxParam == nil {
			p.SoftmaxParam = &caffepb.SoftmaxParameter{}
		}
		p.SoftmaxParam.Engine = caffepb.SoftmaxParameter_Engine(e).Enum()
	case "TanH":
		if p.TanhParam == nil {
			p.TanhParam = &caffepb.TanHParameter{}
		}
		p.TanhParam.Engine = caffepb.TanHParameter_Engine(e).Enum()
	default:
		return text, false
	}
	return prototext.Format(p), true
}

// needDNN skips a test where cuDNN is not found on the GPU machine.
func needDNN(t *testing.T) *device.Context {
	t.Helper()
	ctx := device.New(cudatest.Device(t))
	if _, err := ctx.DNN(); err != nil {
		if errors.Is(err, cuda.ErrNoCuDNN) {
			t.Skipf("no cuDNN here: %v", err)
		}
		t.Fatal(err)
	}
	return ctx
}

// dnnCases are the layers cuDNN computes, with the shapes that reach its
// corners: groups, strides, pads, dilation, 1-D and 3-D convolutions,
// several bottoms, softmax over an inner axis, in-place activations.
var dnnCases = []layertest.Parity{
	{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2 dilation: 2
		weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 17, 13}}, Tol: 1e-3},
	{Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d" convolution_param { num_output: 5 kernel_size: 1
		weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 5, 7}, {2, 3, 5, 7}}, Tol: 1e-3},
	{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 3 pad: 1 bias_term: false
		weight_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 11}}, Tol: 1e-3},
	{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 2 kernel_size: 3 kernel_size: 2 stride: 2 pad: 1
		weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 2, 5, 6, 7}}, Tol: 1e-3},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: AVE kernel_size: 3 stride: 2 }`, Bottom: [][]int{{2, 3, 9, 11}}},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 }`, Bottom: [][]int{{2, 3, 10, 8}}},
	{Layer: `type: "LRN" bottom: "a" top: "n" lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }`, Bottom: [][]int{{2, 7, 5, 4}}},
	{Layer: `type: "Softmax" bottom: "a" top: "s"`, Bottom: [][]int{{3, 5, 2, 4}}},
	{Layer: `type: "Softmax" bottom: "a" top: "s" softmax_param { axis: 2 }`, Bottom: [][]int{{3, 5, 6, 4}}},
	{Layer: `type: "ReLU" bottom: "a" top: "a"`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "Sigmoid" bottom: "a" top: "s"`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "TanH" bottom: "a" top: "a"`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{4, 3, 5, 6}}, Tol: 1e-3, Repeat: 3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { moving_average_fraction: 0.9 eps: 0.001 }`, Bottom: [][]int{{6, 5}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{2, 4, 3, 2, 5}}, Tol: 1e-3},
}

// Every cuDNN engine against the CPU, float32 and float64, and the engine
// asked for is the one that runs.
func TestCuDNNEnginesMatchCPU(t *testing.T) {
	ctx := needDNN(t)
	for _, c := range dnnCases {
		text, _ := withEngine(t, c.Layer, layer.EngineCuDNN)
		c.Layer, c.Context = text, ctx
		name := layertest.Param(t, text).GetType()
		// The engine SetUp chose.
		l := layertest.New[float32](t, text)
		l.LayerBase().SetContext(ctx)
		bottoms := make([]*blob.Blob[float32], len(c.Bottom))
		for i, s := range c.Bottom {
			bottoms[i] = layertest.Blob[float32](t, s...)
			bottoms[i].SetDevice(ctx.Device())
		}
		tops := layertest.Blobs[float32](t, max(len(layertest.Param(t, text).GetTop()), 1))
		if len(layertest.Param(t, text).GetTop()) == 1 && layertest.Param(t, text).GetTop()[0] == layertest.Param(t, text).GetBottom()[0] {
			tops = bottoms[:1] // in place
		}
		layertest.SetUp(t, l, bottoms, tops)
		if got := l.LayerBase().EngineName(); got != layer.EngineCuDNN {
			t.Errorf("%s: engine %v runs, want CUDNN", name, got)
		}
		t.Run(name+"/float32", func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
		c.Tol = 0
		t.Run(name+"/float64", func(t *testing.T) { layertest.CheckGPUParity[float64](t, c) })
	}
}

// gocaffe's own GPU kernels stay tested where cuDNN would take the
// layers: every parity case of a type with a cuDNN engine, forced to CAFFE.
func TestOwnGPUKernelsWhereCuDNNExists(t *testing.T) {
	cudatest.Device(t)
	for _, c := range parityCases {
		text, ok := withEngine(t, c.Layer, layer.EngineCaffe)
		if !ok {
			continue
		}
		c.Layer = text
		name := layertest.Param(t, text).GetType()
		t.Run(name+"/float32", func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
		t.Run(name+"/float64", func(t *testing.T) { layertest.CheckGPUParity[float64](t, c) })
	}
}

// Without cuDNN (a context with the CuDNN setting off stands in for a
// machine without it), DEFAULT runs gocaffe's own kernels, says so once,
// and CUDNN on a convolution is an error naming cuDNN. The check runs in
// a process of its own, whose settings come from its environment
// (GOCAFFE_CUDNN=off) as the gocaffe command's do: "once" is once per
// process.
func TestWithoutCuDNN(t *testing.T) {
	if os.Getenv("GOCAFFE_CUDNN") == "off" {
		s, err := settings.FromLookup(os.LookupEnv)
		if err != nil || s.CuDNN != settings.Off {
			t.Fatalf("settings from GOCAFFE_CUDNN=off: %+v, %v", s, err)
		}
		ctx := device.New(cudatest.Device(t))
		ctx.SetSettings(s)
		for range 2 {
			l := layertest.New[float32](t, `type: "ReLU" bottom: "a" top: "b"`)
			l.LayerBase().SetContext(ctx)
			x := layertest.Blob[float32](t, 2, 3)
			x.SetDevice(ctx.Device())
			layertest.SetUp(t, l, []*blob.Blob[float32]{x}, layertest.Blobs[float32](t, 1))
			if l.LayerBase().EngineName() != layer.EngineCaffe {
				t.Errorf("DEFAULT ran %v without cuDNN", l.LayerBase().EngineName())
			}
		}
		l := layertest.New[float32](t, `type: "Convolution" convolution_param { num_output: 2 kernel_size: 1 engine: CUDNN }`)
		l.LayerBase().SetContext(ctx)
		x := layertest.Blob[float32](t, 1, 1, 2, 2)
		x.SetDevice(ctx.Device())
		err = layer.SetUp(l, []*blob.Blob[float32]{x}, layertest.Blobs[float32](t, 1))
		if err == nil || !strings.Contains(err.Error(), "cuDNN") {
			t.Errorf("engine CUDNN without cuDNN: %v, want an error naming cuDNN", err)
		}
		return
	}
	cudatest.Device(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWithoutCuDNN$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCAFFE_CUDNN=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(string(out), "layers run on gocaffe's own GPU kernels"); n != 1 {
		t.Errorf("the missing cuDNN was reported %d times, want once:\n%s", n, out)
	}
}

// gpuInPlaceMatches runs a layer on the GPU in place and out of place on
// the same input and top gradient (prepare, when not nil, sets its
// parameters) and checks that the top and the bottom's gradient agree.
func gpuInPlaceMatches(t *testing.T, ctx *device.Context, text string, shape []int, prepare func(l layer.Layer[float32])) {
	t.Helper()
	run := func(inPlace bool) (top, diff []float32) {
		l := layertest.New[float32](t, text)
		l.LayerBase().SetContext(ctx)
		x := layertest.Blob[float32](t, shape...)
		x.SetDevice(ctx.Device())
		y := x
		if !inPlace {
			y = layertest.Blob[float32](t)
			y.SetDevice(ctx.Device())
		}
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		// The same input and parameters for both runs (each layer's
		// fillers draw their own).
		for i := range x.Count() {
			x.MutableCPUData()[i] = float32(math.Sin(float64(i)))
		}
		for k, b := range l.LayerBase().Blobs() {
			for j := range b.Count() {
				b.MutableCPUData()[j] = 0.3 + 0.1*float32((j+k)%5)
			}
		}
		if prepare != nil {
			prepare(l)
		}
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		top = append([]float32(nil), y.CPUData()...)
		for i := range y.Count() {
			y.MutableCPUDiff()[i] = float32(i%7) - 3
		}
		layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
		return top, append([]float32(nil), x.CPUDiff()...)
	}
	topIn, diffIn := run(true)
	topOut, diffOut := run(false)
	layertest.CheckClose(t, text+" in place, top", topIn, topOut, 1e-5)
	layertest.CheckClose(t, text+" in place, bottom diff", diffIn, diffOut, 1e-5)
}

// BatchNorm in place on cuDNN (x saved before y overwrites it, dy before dx
// does) gives what it gives out of place, in training and with global
// statistics (own kernels); and a batch of one value per channel, which
// cuDNN's unbiased variance cannot take, goes to gocaffe's engine.
func TestCuDNNBatchNormInPlace(t *testing.T) {
	ctx := needDNN(t)
	gpuInPlaceMatches(t, ctx, `type: "BatchNorm" bottom: "a" top: "b"`, []int{4, 3, 5, 6}, nil)
	gpuInPlaceMatches(t, ctx, `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: true }`, []int{4, 3, 5, 6},
		func(l layer.Layer[float32]) { // running sums of means and variances, and their scale factor
			b := l.LayerBase().Blobs()
			for j := range b[0].Count() {
				b[0].MutableCPUData()[j] = 3 * float32(j)
				b[1].MutableCPUData()[j] = 3 + float32(j)
			}
			b[2].MutableCPUData()[0] = 4
		})
	l := layertest.New[float32](t, `type: "BatchNorm" bottom: "a" top: "b"`)
	l.LayerBase().SetContext(ctx)
	x, y := layertest.Blob[float32](t, 1, 3), layertest.Blob[float32](t)
	x.SetDevice(ctx.Device())
	y.SetDevice(ctx.Device())
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	for i, v := range y.CPUData() {
		if v != 0 {
			t.Fatalf("BatchNorm of one value per channel: y[%d] = %v, want 0 (x - its own mean)", i, v)
		}
	}
}

// Scale's fused GPU kernels in place (x saved by the forward kernel) give
// what they give out of place.
func TestScaleGPUInPlace(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	gpuInPlaceMatches(t, ctx, `type: "Scale" bottom: "a" top: "b" scale_param { filler { type: "gaussian" } bias_term: true bias_filler { type: "gaussian" } }`, []int{4, 3, 5, 6}, nil)
	gpuInPlaceMatches(t, ctx, `type: "Scale" bottom: "a" top: "b" scale_param { axis: 1 num_axes: 2 filler { type: "gaussian" } }`, []int{4, 3, 5, 6}, nil)
}

// In place, cuDNN's BatchNorm computes into its scratch blob and swaps
// memory with the top rather than copying x and dy aside; where another
// blob shares the top's memory (a Split's tops, a Flatten), the memory
// must keep its identity and the copies are made: the sharing blob sees y
// after the forward pass and dx after the backward, as it would in Caffe.
func TestCuDNNBatchNormInPlaceSharedMemory(t *testing.T) {
	ctx := needDNN(t)
	text := `type: "BatchNorm" bottom: "a" top: "b"`
	l := layertest.New[float32](t, text)
	l.LayerBase().SetContext(ctx)
	x := layertest.Blob[float32](t, 4, 3, 5, 6)
	x.SetDevice(ctx.Device())
	alias := layertest.Blob[float32](t, 4, 3, 5, 6)
	alias.SetDevice(ctx.Device())
	if err := alias.ShareData(x); err != nil {
		t.Fatal(err)
	}
	if err := alias.ShareDiff(x); err != nil {
		t.Fatal(err)
	}
	xs := []*blob.Blob[float32]{x}
	layertest.SetUp(t, l, xs, xs)
	for i := range x.Count() {
		x.MutableCPUData()[i] = float32(math.Sin(float64(i)))
	}
	want := layertest.Blob[float32](t)
	want.SetDevice(ctx.Device())
	ref := layertest.New[float32](t, text)
	ref.LayerBase().SetContext(ctx)
	in := layertest.Blob[float32](t, 4, 3, 5, 6)
	in.SetDevice(ctx.Device())
	copy(in.MutableCPUData(), x.CPUData())
	layertest.SetUp(t, ref, []*blob.Blob[float32]{in}, []*blob.Blob[float32]{want})
	layertest.Forward(t, ref, []*blob.Blob[float32]{in}, []*blob.Blob[float32]{want})
	layertest.Forward(t, l, xs, xs)
	layertest.CheckClose(t, "in place with shared memory, the sharing blob's data", alias.CPUData(), want.CPUData(), 1e-5)
	for i := range x.Count() {
		x.MutableCPUDiff()[i] = float32(i%7) - 3
		want.MutableCPUDiff()[i] = float32(i%7) - 3
	}
	layertest.Backward(t, ref, []*blob.Blob[float32]{want}, []bool{true}, []*blob.Blob[float32]{in})
	layertest.Backward(t, l, xs, []bool{true}, xs)
	layertest.CheckClose(t, "in place with shared memory, the sharing blob's diff", alias.CPUDiff(), in.CPUDiff(), 1e-5)
}

// Convolutions match the CPU through cuBLAS GEMMs of our own (the
// ConvGEMM setting gemm, GOCAFFE_CONV_GEMM=gemm), through cuDNN alone, and
// with each pass timed both ways. The 1x1 way: groups, two bottoms (the weight gradient
// accumulating), three spatial axes, no bias, strides (even and odd sizes,
// unequal strides), and the partial weight gradients of 2 images at a time
// over a batch of 3. Other kernels, and 1x1 kernels with padding or a
// stride in 3-D, have no GEMM way.
func TestCuDNNConvGEMMWays(t *testing.T) {
	ctx := needDNN(t)
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
			way, use := layer.ConvGEMMWay(l)
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
			restore := layer.SetPointwiseBudget(2 * 6 * 4)
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
