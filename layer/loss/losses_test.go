package loss_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/protoio"
)

// lossFill fills bottom 0 from N(0, scale^2) (or U(0.1, 1) when scale is
// 0: probabilities), bottom 1 with labels in [0, k), bottom 2 with 0/1
// similarities or, when k2 > 0, a k2 x k2 infogain matrix.
func lossFill(scale float64, k, k2 int) func(i int, b *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		d := b.MutableCPUData()
		switch i {
		case 0:
			if scale == 0 {
				layertest.FillUniform(b, 0.1, 1, 1701)
			} else {
				layertest.FillGaussian(b, 0, scale, 1701)
			}
		case 1:
			if k == 0 { // a second feature blob
				layertest.FillGaussian(b, 0, scale, 1702)
				return
			}
			for j := range d {
				d[j] = float64((j*7 + 3) % k)
			}
		case 2:
			for j := range d {
				if k2 > 0 {
					d[j] = float64(j%5) / 4
				} else {
					d[j] = float64(j * 5 / 3 % 2)
				}
			}
		}
	}
}

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "HingeLoss/L1", Layer: `type: "HingeLoss"`, Bottom: [][]int{{10, 5}, {10}}, Fill: lossFill(10, 5, 0),
			Mode: layertest.Exhaustive, FirstBottomOnly: true, Threshold: 2e-3, Kink: 1, KinkRange: 0.01},
		layertest.GradCase{Name: "HingeLoss/L2", Layer: `type: "HingeLoss" hinge_loss_param { norm: L2 }`, Bottom: [][]int{{10, 5}, {10}}, Fill: lossFill(10, 5, 0),
			Mode: layertest.Exhaustive, FirstBottomOnly: true, Threshold: 1e-2},
		layertest.GradCase{Name: "MultinomialLogisticLoss", Layer: `type: "MultinomialLogisticLoss"`, Bottom: [][]int{{10, 5, 1, 1}, {10, 1, 1, 1}}, Fill: lossFill(0, 5, 0),
			Mode: layertest.Exhaustive, FirstBottomOnly: true, Threshold: 2e-2, Step: 1e-2},
		layertest.GradCase{Name: "ContrastiveLoss", Layer: `type: "ContrastiveLoss"`, Bottom: [][]int{{16, 6, 1, 1}, {16, 6, 1, 1}, {16, 1, 1, 1}}, Fill: lossFill(0.3, 0, 0),
			Mode: layertest.Exhaustive, CheckBottoms: []int{0, 1}, Threshold: 1e-2},
		layertest.GradCase{Name: "ContrastiveLoss/legacy", Layer: `type: "ContrastiveLoss" contrastive_loss_param { legacy_version: true }`, Bottom: [][]int{{16, 6, 1, 1}, {16, 6, 1, 1}, {16, 1, 1, 1}},
			Fill: lossFill(0.3, 0, 0), Mode: layertest.Exhaustive, CheckBottoms: []int{0, 1}, Threshold: 1e-2},
		layertest.GradCase{Name: "InfogainLoss", Layer: `type: "InfogainLoss" infogain_loss_param { axis: 2 }`, Bottom: [][]int{{4, 2, 5, 2}, {4, 2, 1, 2}, {5, 5}},
			Fill: lossFill(1, 5, 5), Mode: layertest.Exhaustive, FirstBottomOnly: true, Step: 1e-4, Threshold: 2e-2},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "HingeLoss" hinge_loss_param { norm: L2 }`, Bottom: [][]int{{10, 5}, {10}}, Fill: layertest.IndexParityFill(1, 5), NoPropagate: []int{1}},
		layertest.Parity{Layer: `type: "MultinomialLogisticLoss"`, Bottom: [][]int{{10, 5}, {10}}, Lo: 0.1, Hi: 1, Fill: layertest.IndexParityFill(1, 5), NoPropagate: []int{1}},
		layertest.Parity{Layer: `type: "ContrastiveLoss"`, Bottom: [][]int{{16, 6}, {16, 6}, {16, 1}}, Fill: layertest.IndexParityFill(2, 2), NoPropagate: []int{2}},
		layertest.Parity{Layer: `type: "InfogainLoss"`, Bottom: [][]int{{8, 5}, {8}, {5, 5}}, Fill: layertest.IndexParityFill(1, 5), NoPropagate: []int{1, 2}},
	)
}

func forwardLoss(t *testing.T, param string, bottom []*blob.Blob[float64]) float64 {
	t.Helper()
	l := layertest.New[float64](t, param)
	top := []*blob.Blob[float64]{layertest.Blob[float64](t)}
	layertest.SetUp(t, l, bottom, top)
	return layertest.Forward(t, l, bottom, top)
}

func filled(t *testing.T, shape []int, vals ...float64) *blob.Blob[float64] {
	b := layertest.Blob[float64](t, shape...)
	copy(b.MutableCPUData(), vals)
	return b
}

// Hand-computed losses for one small case each.
func TestLossValues(t *testing.T) {
	scores := filled(t, []int{2, 3}, 0.5, -2, 1, 3, 0, -0.5)
	labels := filled(t, []int{2}, 2, 0)
	// Hinge L1: item 0: t = (0.5, -2, -1) -> 1.5 + 0 + 0; item 1: t = (-3, 0, -0.5) -> 0 + 1 + 0.5.
	if got := forwardLoss(t, `type: "HingeLoss"`, []*blob.Blob[float64]{scores, labels}); got != 1.5 {
		t.Errorf("hinge L1 = %v, want 1.5", got)
	}
	if got := forwardLoss(t, `type: "HingeLoss" hinge_loss_param { norm: L2 }`, []*blob.Blob[float64]{scores, labels}); got != (2.25+1+0.25)/2 {
		t.Errorf("hinge L2 = %v, want 1.75", got)
	}
	probs := filled(t, []int{2, 3}, 0.2, 0.3, 0.5, 0.6, 0.4, 0)
	want := -(math.Log(0.5) + math.Log(0.6)) / 2
	if got := forwardLoss(t, `type: "MultinomialLogisticLoss"`, []*blob.Blob[float64]{probs, labels}); math.Abs(got-want) > 1e-15 {
		t.Errorf("multinomial = %v, want %v", got, want)
	}
	// Contrastive, margin 2: similar pair at distance 1, dissimilar at
	// distance 1.5 (max(2 - 1.5, 0)^2 = 0.25; legacy max(2 - 2.25, 0) = 0).
	a, b := filled(t, []int{2, 2}, 0, 0, 0, 0), filled(t, []int{2, 2}, 1, 0, 0, 1.5)
	sim := filled(t, []int{2}, 1, 0)
	if got := forwardLoss(t, `type: "ContrastiveLoss" contrastive_loss_param { margin: 2 }`, []*blob.Blob[float64]{a, b, sim}); got != (1+0.25)/4 {
		t.Errorf("contrastive = %v, want %v", got, 1.25/4)
	}
	if got := forwardLoss(t, `type: "ContrastiveLoss" contrastive_loss_param { margin: 2 legacy_version: true }`, []*blob.Blob[float64]{a, b, sim}); got != 0.25 {
		t.Errorf("contrastive legacy = %v, want 0.25", got)
	}
	// Infogain with H = identity is the softmax loss.
	eye := filled(t, []int{3, 3}, 1, 0, 0, 0, 1, 0, 0, 0, 1)
	info := forwardLoss(t, `type: "InfogainLoss"`, []*blob.Blob[float64]{scores, labels, eye})
	soft := forwardLoss(t, `type: "SoftmaxWithLoss"`, []*blob.Blob[float64]{scores, labels})
	if math.Abs(info-soft) > 1e-14 {
		t.Errorf("infogain with identity H = %v, softmax loss %v", info, soft)
	}
	// H from a source file, weighting class 1 into label 0's row.
	dir := t.TempDir()
	h := filled(t, []int{3, 3}, 1, 0.5, 0, 0, 1, 0, 0, 0, 2)
	path := filepath.Join(dir, "h.binaryproto")
	if err := protoio.WriteProtoToBinaryFile(h.ToProto(false), path); err != nil {
		t.Fatal(err)
	}
	got := forwardLoss(t, `type: "InfogainLoss" infogain_loss_param { source: "`+path+`" }`, []*blob.Blob[float64]{scores, labels})
	p := softmaxRows(scores.CPUData(), 3)
	want = -(2*math.Log(p[2]) + math.Log(p[3]) + 0.5*math.Log(p[4])) / 2
	if math.Abs(got-want) > 1e-14 {
		t.Errorf("infogain from source = %v, want %v", got, want)
	}
	if _, err := layer.New[float32](layertest.Param(t, `type: "InfogainLoss" loss_param { normalize: true }`)); err == nil || !strings.Contains(err.Error(), "deprecated") {
		t.Errorf("normalize: %v", err)
	}
}

func softmaxRows(x []float64, k int) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < len(x); i += k {
		s := 0.0
		for j := range k {
			out[i+j] = math.Exp(x[i+j])
			s += out[i+j]
		}
		for j := range k {
			out[i+j] /= s
		}
	}
	return out
}
