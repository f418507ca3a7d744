// Package layertest tests layers the way Caffe's test suite does: a
// finite-difference gradient checker (Caffe's GradientChecker) and helpers
// to build layers from prototxt and fill blobs. With the `cuda` tag it also
// checks that a layer's GPU half computes what its CPU half does.
//
// It is exported so that users who write their own layer types can test
// them with the same tools.
package layertest

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Param parses a LayerParameter from protobuf text, e.g.
// `type: "ReLU" relu_param { negative_slope: 0.1 }`.
func Param(t testing.TB, text string) *caffepb.LayerParameter {
	t.Helper()
	p := &caffepb.LayerParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatalf("layer parameter %q: %v", text, err)
	}
	if p.Name == nil {
		p.Name = new(string)
		*p.Name = p.GetType()
	}
	return p
}

// New builds the layer described by the protobuf text through the registry.
func New[T layer.Float](t testing.TB, text string) layer.Layer[T] {
	t.Helper()
	l, err := layer.New[T](Param(t, text))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Blob returns a blob of the given shape.
func Blob[T layer.Float](t testing.TB, shape ...int) *blob.Blob[T] {
	t.Helper()
	b, err := blob.New[T](shape...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Blobs returns n empty blobs, for tops.
func Blobs[T layer.Float](t testing.TB, n int) []*blob.Blob[T] {
	out := make([]*blob.Blob[T], n)
	for i := range out {
		out[i] = Blob[T](t)
	}
	return out
}

// FillGaussian fills b's data from N(mean, std^2) with the given seed.
func FillGaussian[T layer.Float](b *blob.Blob[T], mean, std float64, seed uint64) {
	mathfn.RngGaussian(b.Count(), T(mean), T(std), b.MutableCPUData(), mathfn.NewRNG(seed))
}

// FillUniform fills b's data from U(lo, hi) with the given seed.
func FillUniform[T layer.Float](b *blob.Blob[T], lo, hi float64, seed uint64) {
	mathfn.RngUniform(b.Count(), T(lo), T(hi), b.MutableCPUData(), mathfn.NewRNG(seed))
}

// SetUp runs layer.SetUp and fails the test on error.
func SetUp[T layer.Float](t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T]) {
	t.Helper()
	if err := layer.SetUp(l, bottom, top); err != nil {
		t.Fatal(err)
	}
}

// Forward runs layer.Forward and fails the test on error.
func Forward[T layer.Float](t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T]) T {
	t.Helper()
	loss, err := layer.Forward(l, bottom, top)
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

// Backward runs layer.Backward and fails the test on error.
func Backward[T layer.Float](t testing.TB, l layer.Layer[T], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) {
	t.Helper()
	if err := layer.Backward(l, top, propagateDown, bottom); err != nil {
		t.Fatal(err)
	}
}

// AllTrue returns n true flags, for propagateDown.
func AllTrue(n int) []bool {
	v := make([]bool, n)
	for i := range v {
		v[i] = true
	}
	return v
}

// GradientChecker compares a layer's analytic gradients (its Backward) with
// central finite differences of its Forward, as Caffe's GradientChecker:
// the objective is a weighted sum of the tops, each input element is moved
// by ±Stepsize, and the two gradients must agree within
// Threshold * max(|analytic|, |numeric|, 1). Inputs within KinkRange of
// Kink (a non-differentiable point, such as ReLU's 0) are skipped.
// Before every forward pass the layer's random number generator is reseeded
// with Seed, so stochastic layers use the same randomness each time.
type GradientChecker[T layer.Float] struct {
	Stepsize, Threshold float64
	Seed                uint64
	Kink, KinkRange     float64 // KinkRange < 0: no kink
}

// NewGradientChecker returns a checker with the given step and threshold,
// no kink and Caffe's seed 1701.
func NewGradientChecker[T layer.Float](stepsize, threshold float64) *GradientChecker[T] {
	return &GradientChecker[T]{Stepsize: stepsize, Threshold: threshold, Seed: 1701, KinkRange: -1}
}

// CheckGradient sets the layer up and checks the gradient of the objective
// half the sum of squares of all tops, with respect to bottom checkBottom
// (every bottom if checkBottom < 0) and every learnable blob.
func (c *GradientChecker[T]) CheckGradient(t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T], checkBottom int) {
	t.Helper()
	SetUp(t, l, bottom, top)
	c.checkSingle(t, l, bottom, top, checkBottom, -1, -1, false)
}

// CheckGradientExhaustive sets the layer up and checks, for every element
// of every top in turn, the gradient of that element alone.
func (c *GradientChecker[T]) CheckGradientExhaustive(t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T], checkBottom int) {
	t.Helper()
	SetUp(t, l, bottom, top)
	if len(top) == 0 {
		t.Fatal("exhaustive mode requires at least one top blob")
	}
	for i := range top {
		// The count is read on every step, as Caffe's checker does: a
		// layer's first forward pass may shrink its tops (Filter).
		for j := 0; j < top[i].Count(); j++ {
			if !c.checkSingle(t, l, bottom, top, checkBottom, i, j, false) {
				return
			}
		}
	}
}

// CheckGradientEltwise is CheckGradientExhaustive for element-wise layers:
// top element j depends only on bottom element j, so only that one is
// moved.
func (c *GradientChecker[T]) CheckGradientEltwise(t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T]) {
	t.Helper()
	SetUp(t, l, bottom, top)
	for i := range top {
		for j := range top[i].Count() {
			if !c.checkSingle(t, l, bottom, top, -1, i, j, true) {
				return
			}
		}
	}
}

// maxFailures stops a check after this many mismatches.
const maxFailures = 10

// checkSingle checks the gradient of one objective (top topID element
// topData, or all tops if topID < 0). It returns false once the test has
// failed, so callers stop early.
func (c *GradientChecker[T]) checkSingle(t testing.TB, l layer.Layer[T], bottom, top []*blob.Blob[T], checkBottom, topID, topData int, elementwise bool) bool {
	t.Helper()
	base := l.LayerBase()
	// The blobs to check: the learnable ones that get a gradient (diffs
	// zeroed, as Backward accumulates into them) and the chosen bottoms.
	type checked struct {
		b    *blob.Blob[T]
		name string
	}
	var blobs []checked
	for i, p := range base.Blobs() {
		if !base.ParamPropagateDown(i) {
			continue
		}
		mathfn.Set(p.Count(), 0, p.MutableCPUDiff())
		blobs = append(blobs, checked{p, fmt.Sprintf("param blob %d", i)})
	}
	propagate := make([]bool, len(bottom))
	for i, b := range bottom {
		if checkBottom < 0 || checkBottom == i {
			blobs = append(blobs, checked{b, fmt.Sprintf("bottom %d", i)})
			propagate[i] = true
		}
	}
	if len(blobs) == 0 {
		t.Fatal("no blobs to check")
	}
	// The analytic gradient.
	forward := func() float64 {
		base.SetRNG(mathfn.NewRNG(c.Seed))
		Forward(t, l, bottom, top)
		return objective(top, topID, topData)
	}
	forward()
	Backward(t, l, top, propagate, bottom)
	analytic := make([][]T, len(blobs))
	for i, cb := range blobs {
		analytic[i] = append([]T(nil), cb.b.CPUDiff()...)
	}
	// The numeric gradient, element by element.
	failures := 0
	for i, cb := range blobs {
		for j := range cb.b.Count() {
			if elementwise && j != topData {
				continue
			}
			x := cb.b.CPUData()[j]
			if c.KinkRange >= 0 && math.Abs(math.Abs(float64(x))-c.Kink) <= c.KinkRange {
				continue
			}
			cb.b.MutableCPUData()[j] = x + T(c.Stepsize)
			plus := forward()
			cb.b.MutableCPUData()[j] = x - T(c.Stepsize)
			minus := forward()
			cb.b.MutableCPUData()[j] = x
			numeric := (plus - minus) / (2 * c.Stepsize)
			got := float64(analytic[i][j])
			scale := math.Max(math.Max(math.Abs(got), math.Abs(numeric)), 1)
			if math.Abs(got-numeric) > c.Threshold*scale {
				failures++
				t.Errorf("%s: %s element %d (objective: top %d element %d): analytic gradient %.6g, numeric %.6g",
					l.Type(), cb.name, j, topID, topData, got, numeric)
				if failures >= maxFailures {
					t.Errorf("stopping after %d mismatches", failures)
					return false
				}
			}
		}
	}
	return !t.Failed()
}

// objective computes Caffe's GetObjAndGradient: with topID < 0 half the sum
// of squares of all tops (their diffs set to their data), otherwise twice
// top topID's element topData (its diff 2, all others 0).
func objective[T layer.Float](top []*blob.Blob[T], topID, topData int) float64 {
	var loss float64
	if topID < 0 {
		for _, b := range top {
			data := b.CPUData()
			for _, v := range data {
				loss += float64(v) * float64(v)
			}
			copy(b.MutableCPUDiff(), data)
		}
		return loss / 2
	}
	for _, b := range top {
		mathfn.Set(b.Count(), 0, b.MutableCPUDiff())
	}
	const weight = 2
	loss = float64(top[topID].CPUData()[topData]) * weight
	top[topID].MutableCPUDiff()[topData] = weight
	return loss
}

// CheckClose fails the test unless got and want (equal length) agree
// element-wise within tol * max(1, |want|).
func CheckClose[T layer.Float](t testing.TB, what string, got, want []T, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			t.Errorf("%s[%d] = %.7g, want %.7g", what, i, g, w)
			if bad++; bad >= maxFailures {
				t.Fatalf("%s: stopping after %d mismatches", what, bad)
			}
		}
	}
}

// Parity describes a CPU/GPU parity check.
type Parity struct {
	// Layer is the layer's protobuf text (see New).
	Layer string
	// Bottom are the bottom shapes; their data are drawn from U(Lo, Hi)
	// unless Fill is given.
	Bottom [][]int
	Lo, Hi float64
	// Fill, if not nil, fills bottom i instead (labels, say).
	Fill func(i int, b []float64)
	// NoPropagate lists bottoms that get no gradient (labels).
	NoPropagate []int
	// Tol is the element-wise relative tolerance (default 1e-4 for float32,
	// 1e-10 for float64).
	Tol float64
	// Repeat runs forward and backward this many times (default 2), so that
	// state carried between passes (running averages) is compared too.
	Repeat int
	// Context is the GPU layer's context (default: a new one on device 0).
	Context *device.Context
	// Reduced, if a 16-bit type, makes the GPU layer compute in it
	// (layer.SetReduced); with StoreReduced its bottoms and tops are
	// stored in it too, else they stay FP32 and the layer converts at its
	// edges. Tol then bounds the error of the 16-bit computation.
	Reduced      syncedmem.Storage
	StoreReduced bool
}
