package layer_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// Every layer's test file registers, in an init function, the gradient
// checks and the CPU/GPU parity checks it needs. TestGradients runs the
// gradient checks on the CPU; with the cuda tag, TestGradientsOnGPU runs the
// same cases in GPU mode and TestGPUParity runs the parity cases, so no
// layer can be checked in one mode and forgotten in the other.

// gradMode selects Caffe's CheckGradient variants.
type gradMode int

const (
	exhaustive gradMode = iota // every top element in turn
	eltwise                    // element-wise layers: element j against element j
	summed                     // one objective: half the sum of squares of the tops
)

type gradCase struct {
	name   string
	layer  string  // the LayerParameter as protobuf text
	bottom [][]int // bottom shapes
	// fill fills bottom i (default: gaussian, mean 0, std 1).
	fill func(i int, b *blob.Blob[float64])
	mode gradMode
	// firstBottomOnly checks only bottom 0 (the others are labels or
	// targets); otherwise every bottom is checked.
	firstBottomOnly bool
	// checkBottoms, if set, checks these bottoms one at a time instead.
	checkBottoms    []int
	step, threshold float64 // default 1e-2 and 1e-3
	kink, kinkRange float64 // kinkRange 0 means no kink
}

var gradCases []gradCase

// parityCases are CPU/GPU parity checks, run for float32 and float64.
var parityCases []layertest.Parity

func addGradCases(cases ...gradCase)           { gradCases = append(gradCases, cases...) }
func addParityCases(cases ...layertest.Parity) { parityCases = append(parityCases, cases...) }

// runGradCase builds the case's layer (configured by prepare, e.g. to put
// it on a device) and checks its gradient in float64: every bottom, the
// first only, or each of checkBottoms in turn on a fresh layer.
func runGradCase(t *testing.T, c gradCase, prepare func(layer.Layer[float64], []*blob.Blob[float64])) {
	switch {
	case len(c.checkBottoms) > 0:
		for _, b := range c.checkBottoms {
			t.Run("bottom"+itoa(b), func(t *testing.T) { runGradCheck(t, c, prepare, b) })
		}
	case c.firstBottomOnly:
		runGradCheck(t, c, prepare, 0)
	default:
		runGradCheck(t, c, prepare, -1)
	}
}

// runGradCheck checks bottom checkBottom (all if < 0) and the parameters.
func runGradCheck(t *testing.T, c gradCase, prepare func(layer.Layer[float64], []*blob.Blob[float64]), checkBottom int) {
	l := layertest.New[float64](t, c.layer)
	var bottom []*blob.Blob[float64]
	for i, shape := range c.bottom {
		b := layertest.Blob[float64](t, shape...)
		if c.fill != nil {
			c.fill(i, b)
		} else {
			layertest.FillGaussian(b, 0, 1, uint64(1701+i))
		}
		bottom = append(bottom, b)
	}
	nTop := len(l.LayerBase().Param().GetTop())
	if nTop == 0 {
		nTop = l.Counts().Top.Min
	}
	top := layertest.Blobs[float64](t, nTop)
	if prepare != nil {
		prepare(l, append(bottom, top...))
	}
	step, threshold := c.step, c.threshold
	if step == 0 {
		step = 1e-2
	}
	if threshold == 0 {
		threshold = 1e-3
	}
	checker := layertest.NewGradientChecker[float64](step, threshold)
	if c.kinkRange > 0 {
		checker.Kink, checker.KinkRange = c.kink, c.kinkRange
	}
	check(t, checker, c.mode, l, bottom, top, checkBottom)
}

// check runs the checker in the case's mode.
func check(t *testing.T, checker *layertest.GradientChecker[float64], mode gradMode, l layer.Layer[float64], bottom, top []*blob.Blob[float64], checkBottom int) {
	switch mode {
	case exhaustive:
		checker.CheckGradientExhaustive(t, l, bottom, top, checkBottom)
	case eltwise:
		checker.CheckGradientEltwise(t, l, bottom, top)
	case summed:
		checker.CheckGradient(t, l, bottom, top, checkBottom)
	}
}

func TestGradients(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) { runGradCase(t, c, nil) })
	}
}

// TestEveryLayerHasCases fails when a registered layer type has no gradient
// or parity case (types with nothing to differentiate say so here).
func TestEveryLayerHasCases(t *testing.T) {
	noGradient := map[string]bool{
		// No backward, or nothing continuous to check.
		"Accuracy": true, "Input": true, "DummyData": true, "Silence": true, "Threshold": true,
		"Data": true, "ImageData": true, "MemoryData": true, "HDF5Data": true, "HDF5Output": true,
		"WindowData": true, "AnnotatedData": true, "VideoData": true, "ArgMax": true, "PriorBox": true, "DetectionOutput": true, "DetectionEvaluate": true,
		// Checked in their own tests, on the parameters only or one bottom
		// at a time (their other bottoms are indices).
		"Embed": true, "Filter": true,
	}
	// Layers whose parity check needs files or data made at run time, which a
	// static parity case cannot describe: data_cuda_test.go checks them.
	// HDF5Data, HDF5Output and WindowData have only a CPU half (they move
	// data, the blobs' memory does the device copies).
	parityElsewhere := map[string]bool{"Data": true, "ImageData": true, "MemoryData": true, "HDF5Data": true, "HDF5Output": true, "WindowData": true,
		"AnnotatedData": true, "VideoData": true}
	covered := map[string]bool{}
	for _, c := range gradCases {
		covered[layertest.Param(t, c.layer).GetType()] = true
	}
	parity := map[string]bool{}
	for _, c := range parityCases {
		parity[layertest.Param(t, c.Layer).GetType()] = true
	}
	for _, typ := range layer.Types() {
		if !covered[typ] && !noGradient[typ] {
			t.Errorf("layer type %s has no gradient check", typ)
		}
		if !parity[typ] && !parityElsewhere[typ] {
			t.Errorf("layer type %s has no CPU/GPU parity check", typ)
		}
	}
}
