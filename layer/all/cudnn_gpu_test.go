package all_test

import (
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/settings"
)

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
	ctx := layertest.NeedDNN(t)
	for _, c := range dnnCases {
		text, _ := layertest.WithEngine(t, c.Layer, layer.EngineCuDNN)
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
	ctx := layertest.NeedDNN(t)
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

// In place, cuDNN's BatchNorm computes into its scratch blob and
// exchanges data memories with the top rather than copying x aside (the
// net restores them before the top's maker runs again), and swaps diffs
// where no other blob shares them; where another blob shares the top's
// diff (a Split's tops, a Flatten), the diff keeps its identity and the
// copy is made: the sharing blob sees y after the forward pass (sharing
// again, as its layer does) and dx after the backward, as it would in
// Caffe.
func TestCuDNNBatchNormInPlaceSharedMemory(t *testing.T) {
	ctx := layertest.NeedDNN(t)
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
	// The forward pass exchanges the top's data memory with the scratch
	// blob's (layer.TopDataExchanger): a blob that shares it takes the
	// top's new memory where its layer shares again, as Split's and
	// Flatten's Reshape do before each of their passes.
	if err := alias.ShareData(x); err != nil {
		t.Fatal(err)
	}
	layertest.CheckClose(t, "in place with shared memory, the sharing blob's data", alias.CPUData(), want.CPUData(), 1e-5)
	for i := range x.Count() {
		x.MutableCPUDiff()[i] = float32(i%7) - 3
		want.MutableCPUDiff()[i] = float32(i%7) - 3
	}
	layertest.Backward(t, ref, []*blob.Blob[float32]{want}, []bool{true}, []*blob.Blob[float32]{in})
	layertest.Backward(t, l, xs, []bool{true}, xs)
	layertest.CheckClose(t, "in place with shared memory, the sharing blob's diff", alias.CPUDiff(), in.CPUDiff(), 1e-5)
}
