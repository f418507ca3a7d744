package neuron_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

// Helpers shared by the tests of the element-wise layers (PReLU, ELU,
// Sigmoid, TanH, AbsVal, Power, Exp, Log, BNLL, Threshold, Dropout).

// neuronShape is the bottom of Caffe's neuron layer tests.
var neuronShape = []int{2, 3, 4, 5}

// neuronGaussian returns n samples of N(0, 1) drawn with the given seed.
func neuronGaussian(n int, seed uint64) []float64 {
	v := make([]float64, n)
	mathfn.RngGaussian(n, 0, 1, v, mathfn.NewRNG(seed))
	return v
}

// neuronCount is the number of elements of a shape.
func neuronCount(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// neuronRun is one forward and backward pass of a one-bottom, one-top
// layer.
type neuronRun[T layer.Float] struct {
	l     layer.Layer[T]
	y, dx []T
	// paramDiffs are the learnable blobs' diffs after the backward pass.
	paramDiffs [][]T
}

// runNeuron builds the layer from text (its generator seeded with 7), sets
// it up on a bottom of the given shape holding x (in place if asked), runs
// the forward pass and, if dy is not nil, the backward pass with top diff
// dy.
func runNeuron[T layer.Float](t *testing.T, text string, shape []int, x, dy []float64, inPlace bool) neuronRun[T] {
	t.Helper()
	l := layertest.New[T](t, text)
	l.LayerBase().SetRNG(mathfn.NewRNG(7))
	bottom := layertest.Blob[T](t, shape...)
	for i, v := range x {
		bottom.MutableCPUData()[i] = T(v)
	}
	top := bottom
	if !inPlace {
		top = layertest.Blob[T](t)
	}
	bottoms, tops := []*blob.Blob[T]{bottom}, []*blob.Blob[T]{top}
	layertest.SetUp(t, l, bottoms, tops)
	layertest.Forward(t, l, bottoms, tops)
	r := neuronRun[T]{l: l, y: slices.Clone(top.CPUData())}
	if dy == nil {
		return r
	}
	for i, v := range dy {
		top.MutableCPUDiff()[i] = T(v)
	}
	for _, p := range l.LayerBase().Blobs() {
		mathfn.Set(p.Count(), 0, p.MutableCPUDiff())
	}
	layertest.Backward(t, l, tops, []bool{true}, bottoms)
	r.dx = slices.Clone(bottom.CPUDiff())
	for _, p := range l.LayerBase().Blobs() {
		r.paramDiffs = append(r.paramDiffs, slices.Clone(p.CPUDiff()))
	}
	return r
}

// checkNeuronInPlace checks that the layer computes the same top, bottom diff and
// parameter diffs in place as out of place.
func checkNeuronInPlace(t *testing.T, text string, x []float64) {
	t.Helper()
	dy := neuronGaussian(len(x), 99)
	out := runNeuron[float64](t, text, neuronShape, x, dy, false)
	in := runNeuron[float64](t, text, neuronShape, x, dy, true)
	layertest.CheckClose(t, "in-place top", in.y, out.y, 0)
	layertest.CheckClose(t, "in-place bottom diff", in.dx, out.dx, 0)
	for i := range out.paramDiffs {
		layertest.CheckClose(t, "in-place param diff", in.paramDiffs[i], out.paramDiffs[i], 0)
	}
}

// neuronPositive returns the gaussian test data made positive, exp(x), as
// Caffe's Log tests do.
func neuronPositive(n int, seed uint64) []float64 {
	v := neuronGaussian(n, seed)
	for i := range v {
		v[i] = math.Exp(v[i])
	}
	return v
}

// neuronFillPositive is a gradCase fill giving exp(N(0, 1)) data.
func neuronFillPositive(i int, b *blob.Blob[float64]) {
	copy(b.MutableCPUData(), neuronPositive(b.Count(), uint64(1701+i)))
}

// TestNeuronFloat32MatchesFloat64 runs every element-wise layer in both
// precisions on the CPU: the float32 halves must agree with the float64
// ones to float32 accuracy.
func TestNeuronFloat32MatchesFloat64(t *testing.T) {
	cases := []struct {
		layer string
		x     []float64
	}{
		{`type: "PReLU" prelu_param { filler { type: "gaussian" } }`, nil},
		{`type: "PReLU" prelu_param { channel_shared: true }`, nil},
		{`type: "ELU" elu_param { alpha: 0.5 }`, nil},
		{`type: "Sigmoid"`, nil},
		{`type: "TanH"`, nil},
		{`type: "AbsVal"`, nil},
		{`type: "Power" power_param { power: 0.37 scale: 0.83 shift: 0.2 }`, neuronPositive(120, 5)},
		{`type: "Power" power_param { power: 2 scale: 0.34 shift: -2.4 }`, nil},
		{`type: "Exp" exp_param { base: 2 scale: 3 shift: 1 }`, nil},
		{`type: "Log" log_param { base: 2 scale: 3 shift: 1 }`, neuronPositive(120, 5)},
		{`type: "BNLL"`, nil},
		{`type: "Dropout" dropout_param { dropout_ratio: 0.3 }`, nil},
		{`type: "Dropout" phase: TEST`, nil},
	}
	for _, c := range cases {
		t.Run(c.layer, func(t *testing.T) {
			x := c.x
			if x == nil {
				x = neuronGaussian(120, 5)
			}
			dy := neuronGaussian(120, 6)
			r64 := runNeuron[float64](t, c.layer, neuronShape, x, dy, false)
			r32 := runNeuron[float32](t, c.layer, neuronShape, x, dy, false)
			check := func(what string, got []float32, want []float64) {
				w := make([]float32, len(want))
				for i, v := range want {
					w[i] = float32(v)
				}
				layertest.CheckClose(t, what, got, w, 1e-5)
			}
			check("top", r32.y, r64.y)
			check("bottom diff", r32.dx, r64.dx)
			for i := range r64.paramDiffs {
				check("param diff", r32.paramDiffs[i], r64.paramDiffs[i])
			}
		})
	}
}
