package layertest

import (
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
)

// Every layer package's test files register, in init functions, the
// gradient checks and the CPU/GPU parity checks they need in the package's
// Cases; its TestGradients runs the gradient checks on the CPU and, with
// the cuda tag, TestGradientsOnGPU runs the same cases in GPU mode and
// TestGPUParity runs the parity cases, so that no layer can be checked in
// one mode and forgotten in the other. CheckCoverage fails for a type of
// the package with neither.

// GradMode selects Caffe's CheckGradient variants.
type GradMode int

const (
	Exhaustive GradMode = iota // every top element in turn
	Eltwise                    // element-wise layers: element j against element j
	Summed                     // one objective: half the sum of squares of the tops
)

// GradCase is a finite-difference gradient check of one layer, in float64.
type GradCase struct {
	Name   string
	Layer  string  // the LayerParameter as protobuf text
	Bottom [][]int // bottom shapes
	// Fill fills bottom i (default: gaussian, mean 0, std 1).
	Fill func(i int, b *blob.Blob[float64])
	Mode GradMode
	// FirstBottomOnly checks only bottom 0 (the others are labels or
	// targets); otherwise every bottom is checked.
	FirstBottomOnly bool
	// CheckBottoms, if set, checks these bottoms one at a time instead.
	CheckBottoms    []int
	Step, Threshold float64 // default 1e-2 and 1e-3
	Kink, KinkRange float64 // KinkRange 0 means no kink
}

// Cases are a package's gradient and parity checks.
type Cases struct {
	Grad   []GradCase
	Parity []Parity // run for float32 and float64
}

// AddGrad adds gradient checks.
func (c *Cases) AddGrad(cases ...GradCase) { c.Grad = append(c.Grad, cases...) }

// AddParity adds CPU/GPU parity checks.
func (c *Cases) AddParity(cases ...Parity) { c.Parity = append(c.Parity, cases...) }

// RunGradients runs every gradient case on the CPU.
func (c *Cases) RunGradients(t *testing.T) {
	for _, g := range c.Grad {
		t.Run(g.Name, func(t *testing.T) { RunGradCase(t, g, nil) })
	}
}

// RunGradientsOnGPU runs every gradient case with the layer on the GPU
// (skipped without one).
func (c *Cases) RunGradientsOnGPU(t *testing.T) {
	dev := cudatest.Device(t)
	ctx := device.New(dev)
	onGPU := func(l layer.Layer[float64], blobs []*blob.Blob[float64]) {
		l.LayerBase().SetContext(ctx)
		for _, b := range blobs {
			b.SetDevice(dev)
		}
	}
	for _, g := range c.Grad {
		t.Run(g.Name, func(t *testing.T) { RunGradCase(t, g, onGPU) })
	}
}

// RunGPUParity runs every parity case in float32 and float64.
func (c *Cases) RunGPUParity(t *testing.T) {
	for _, p := range c.Parity {
		name := Param(t, p.Layer).GetType()
		t.Run(name+"/float32", func(t *testing.T) { CheckGPUParity[float32](t, p) })
		t.Run(name+"/float64", func(t *testing.T) { CheckGPUParity[float64](t, p) })
	}
}

// RunOwnGPUKernels keeps gocaffe's own GPU kernels tested where cuDNN
// would take the layers: every parity case of a type with an engine field,
// forced to the CAFFE engine (skipped without a GPU).
func (c *Cases) RunOwnGPUKernels(t *testing.T) {
	cudatest.Device(t)
	for _, p := range c.Parity {
		text, ok := WithEngine(t, p.Layer, layer.EngineCaffe)
		if !ok {
			continue
		}
		p.Layer = text
		name := Param(t, text).GetType()
		t.Run(name+"/float32", func(t *testing.T) { CheckGPUParity[float32](t, p) })
		t.Run(name+"/float64", func(t *testing.T) { CheckGPUParity[float64](t, p) })
	}
}

// CheckCoverage fails when a type of types has no gradient case, unless
// noGradient names it (nothing to differentiate, or checked in its own
// tests), or no parity case, unless parityElsewhere names it (a check
// that needs files made at run time).
func (c *Cases) CheckCoverage(t *testing.T, types []string, noGradient, parityElsewhere map[string]bool) {
	t.Helper()
	covered := map[string]bool{}
	for _, g := range c.Grad {
		covered[Param(t, g.Layer).GetType()] = true
	}
	parity := map[string]bool{}
	for _, p := range c.Parity {
		parity[Param(t, p.Layer).GetType()] = true
	}
	for _, typ := range types {
		if !covered[typ] && !noGradient[typ] {
			t.Errorf("layer type %s has no gradient check", typ)
		}
		if !parity[typ] && !parityElsewhere[typ] {
			t.Errorf("layer type %s has no CPU/GPU parity check", typ)
		}
	}
}

// RunGradCase builds the case's layer (configured by prepare, e.g. to put
// it on a device) and checks its gradient in float64: every bottom, the
// first only, or each of CheckBottoms in turn on a fresh layer.
func RunGradCase(t *testing.T, c GradCase, prepare func(layer.Layer[float64], []*blob.Blob[float64])) {
	switch {
	case len(c.CheckBottoms) > 0:
		for _, b := range c.CheckBottoms {
			t.Run("bottom"+strconv.Itoa(b), func(t *testing.T) { runGradCheck(t, c, prepare, b) })
		}
	case c.FirstBottomOnly:
		runGradCheck(t, c, prepare, 0)
	default:
		runGradCheck(t, c, prepare, -1)
	}
}

// runGradCheck checks bottom checkBottom (all if < 0) and the parameters.
func runGradCheck(t *testing.T, c GradCase, prepare func(layer.Layer[float64], []*blob.Blob[float64]), checkBottom int) {
	l := New[float64](t, c.Layer)
	var bottom []*blob.Blob[float64]
	for i, shape := range c.Bottom {
		b := Blob[float64](t, shape...)
		if c.Fill != nil {
			c.Fill(i, b)
		} else {
			FillGaussian(b, 0, 1, uint64(1701+i))
		}
		bottom = append(bottom, b)
	}
	nTop := len(l.LayerBase().Param().GetTop())
	if nTop == 0 {
		nTop = l.Counts().Top.Min
	}
	top := Blobs[float64](t, nTop)
	if prepare != nil {
		prepare(l, append(bottom, top...))
	}
	step, threshold := c.Step, c.Threshold
	if step == 0 {
		step = 1e-2
	}
	if threshold == 0 {
		threshold = 1e-3
	}
	checker := NewGradientChecker[float64](step, threshold)
	if c.KinkRange > 0 {
		checker.Kink, checker.KinkRange = c.Kink, c.KinkRange
	}
	check(t, checker, c.Mode, l, bottom, top, checkBottom)
}

// check runs the checker in the case's mode.
func check(t *testing.T, checker *GradientChecker[float64], mode GradMode, l layer.Layer[float64], bottom, top []*blob.Blob[float64], checkBottom int) {
	switch mode {
	case Exhaustive:
		checker.CheckGradientExhaustive(t, l, bottom, top, checkBottom)
	case Eltwise:
		checker.CheckGradientEltwise(t, l, bottom, top)
	case Summed:
		checker.CheckGradient(t, l, bottom, top, checkBottom)
	}
}

// Run runs a package's cases as subtests: Gradients (on the CPU),
// GradientsOnGPU, GPUParity, OwnGPUKernels and GraphReplay (skipped
// without a GPU), and Coverage,
// which fails for a type the package registers (TypesOf(pkg)) without
// cases (see CheckCoverage). A layer package's cases_test.go calls it from
// its TestCases.
func (c *Cases) Run(t *testing.T, pkg string, noGradient, parityElsewhere map[string]bool) {
	t.Run("Gradients", c.RunGradients)
	t.Run("GradientsOnGPU", c.RunGradientsOnGPU)
	t.Run("GPUParity", c.RunGPUParity)
	t.Run("OwnGPUKernels", c.RunOwnGPUKernels)
	t.Run("GraphReplay", c.RunGraphReplay)
	t.Run("Coverage", func(t *testing.T) { c.CheckCoverage(t, TypesOf(t, pkg), noGradient, parityElsewhere) })
}

// TypesOf returns the registered layer types whose constructors are
// package pkg's (its import path), sorted: the types a package of layers
// registers.
func TypesOf(t testing.TB, pkg string) []string {
	t.Helper()
	var types []string
	for _, s := range layer.Specs() {
		name := runtime.FuncForPC(reflect.ValueOf(s.New32).Pointer()).Name()
		if strings.HasPrefix(name, pkg+".") {
			types = append(types, s.Type)
		}
	}
	if len(types) == 0 {
		t.Fatalf("package %s registers no layer type", pkg)
	}
	return types
}

// Ftoa formats v the shortest way that reads back as v, for layer text.
func Ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// IndexFill fills bottom which of a gradient case with integers in
// [0, n) (indices, selectors, labels) and the others with Gaussian values.
func IndexFill(which, n int) func(i int, b *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		if i != which {
			FillGaussian(b, 0, 1, uint64(1701+i))
			return
		}
		for j := range b.MutableCPUData() {
			b.MutableCPUData()[j] = float64((j*7 + 3) % n)
		}
	}
}

// IndexParityFill is IndexFill for a parity case: integers in [0, n) in
// bottom which, smooth values in the others.
func IndexParityFill(which, n int) func(i int, b []float64) {
	return func(i int, b []float64) {
		for j := range b {
			if i == which {
				b[j] = float64((j*7 + 3) % n)
			} else {
				b[j] = math.Sin(float64(j*13 + i))
			}
		}
	}
}

// Sum is the sum of v.
func Sum(v []float64) float64 {
	var s float64
	for _, e := range v {
		s += e
	}
	return s
}

// Dot is the dot product of a and b.
func Dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
