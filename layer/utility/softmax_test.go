package utility_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/utility"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Softmax", Layer: `type: "Softmax" bottom: "x" top: "y"`, Bottom: [][]int{{2, 10, 2, 3}}},
		layertest.GradCase{Name: "Softmax/axis3", Layer: `type: "Softmax" bottom: "x" top: "y" softmax_param { axis: -1 }`, Bottom: [][]int{{2, 3, 4}}},
	)
	cases.AddParity(layertest.Parity{Layer: `type: "Softmax" bottom: "x" top: "y"`, Bottom: [][]int{{4, 10, 5, 3}}, Lo: -5, Hi: 5})
}

func TestSoftmaxForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Softmax"`)
	x := layertest.Blob[float64](t, 2, 10, 2, 3)
	layertest.FillGaussian(x, 0, 3, 1)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for n := range 2 {
		for h := range 2 {
			for w := range 3 {
				sum := 0.0
				for c := range 10 {
					sum += math.Exp(x.CPUData()[x.Offset(n, c, h, w)])
				}
				for c := range 10 {
					want := math.Exp(x.CPUData()[x.Offset(n, c, h, w)]) / sum
					if got := y.CPUData()[y.Offset(n, c, h, w)]; math.Abs(got-want) > 1e-12 {
						t.Fatalf("softmax(%d,%d,%d,%d) = %v, want %v", n, c, h, w, got, want)
					}
				}
			}
		}
	}
}

// The maximum is subtracted first: huge scores do not overflow.
func TestSoftmaxIsStable(t *testing.T) {
	l := layertest.New[float32](t, `type: "Softmax"`)
	x := layertest.Blob[float32](t, 1, 3)
	copy(x.MutableCPUData(), []float32{1000, 1000, 999})
	y := layertest.Blob[float32](t)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	e := math.Exp(-1)
	layertest.CheckClose(t, "softmax of large scores", y.CPUData(), []float32{float32(1 / (2 + e)), float32(1 / (2 + e)), float32(e / (2 + e))}, 1e-6)
}

// A pass large enough to be spread over the cores (MobileNet-SSD's
// confidences, and an inner axis of 5) gives what each position's
// softmax in float64 gives.
func TestSoftmaxForwardParallel(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{`softmax_param { axis: 2 }`, []int{1, 1917, 21}},
		{``, []int{3, 21, 131, 5}},
	} {
		l := layertest.New[float32](t, `type: "Softmax" `+c.param)
		x := layertest.Blob[float32](t, c.shape...)
		layertest.FillGaussian(x, 0, 3, 2)
		y := layertest.Blob[float32](t)
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		outer, ch := c.shape[0], c.shape[1]
		inner := x.Count() / (outer * ch)
		if c.param != "" {
			outer, ch, inner = c.shape[0]*c.shape[1], c.shape[2], 1
		}
		xs, ys := x.CPUData(), y.CPUData()
		for o := range outer {
			for k := range inner {
				sum := 0.0
				for j := range ch {
					sum += math.Exp(float64(xs[(o*ch+j)*inner+k]))
				}
				for j := range ch {
					i := (o*ch+j)*inner + k
					want := math.Exp(float64(xs[i])) / sum
					if got := float64(ys[i]); math.Abs(got-want) > 1e-6*math.Max(want, 1e-3) {
						t.Fatalf("%v %s: y[%d] = %v, want %v", c.shape, c.param, i, got, want)
					}
				}
			}
		}
	}
}

// expFast is within 2 ulp of the correctly rounded e^x over its range,
// and math.Exp's outside it (underflow, overflow, infinities, NaN).
func TestExpFast(t *testing.T) {
	worst := 0.0
	for i := 0; i <= 2000000; i++ {
		x := float32(-87 + 175*float64(i)/2000000)
		want := math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		worst = max(worst, math.Abs(float64(utility.ExpFast(x))-want)/ulp)
	}
	t.Logf("largest error %.3f ulp", worst)
	if worst > 2 {
		t.Errorf("largest error %.2f ulp, want at most 2", worst)
	}
	for _, x := range []float32{-87.5, -100, -200, 88.5, 100, float32(math.Inf(-1)), float32(math.Inf(1))} {
		if got, want := utility.ExpFast(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("expFast(%v) = %v, want %v", x, got, want)
		}
	}
	if got := utility.ExpFast(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Errorf("expFast(NaN) = %v", got)
	}
}

// In an inference plan (SetInferenceOnly) a float32 Softmax takes
// expFast: within 1e-6 of the training pass's probabilities.
func TestSoftmaxInferenceOnly(t *testing.T) {
	run := func(infer bool) []float32 {
		l := layertest.New[float32](t, `type: "Softmax" softmax_param { axis: 2 }`)
		bottom := []*blob.Blob[float32]{layertest.Blob[float32](t, 2, 300, 21)}
		layertest.FillGaussian(bottom[0], 0, 4, 3)
		top := layertest.Blobs[float32](t, 1)
		layertest.SetUp(t, l, bottom, top)
		l.(layer.InferenceOnly).SetInferenceOnly(infer)
		layertest.Forward(t, l, bottom, top)
		return top[0].CPUData()
	}
	want, got := run(false), run(true)
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-6 {
			t.Fatalf("probability %d: %v, training's %v", i, got[i], want[i])
		}
	}
}
