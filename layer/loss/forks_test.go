package loss_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "SmoothL1Loss", Layer: `type: "SmoothL1Loss" smooth_l1_loss_param { sigma: 2 } loss_weight: 2.5`,
			Bottom: [][]int{{4, 6, 1, 1}, {4, 6, 1, 1}}, Threshold: 1e-2, Kink: 0.25, KinkRange: 0.02},
		layertest.GradCase{Name: "SmoothL1Loss/weights", Layer: `type: "SmoothL1Loss"`,
			Bottom: [][]int{{3, 4, 2, 1}, {3, 4, 2, 1}, {3, 4, 2, 1}, {3, 4, 2, 1}}, Fill: fillSmoothL1,
			CheckBottoms: []int{0, 1}, Threshold: 1e-2},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "SmoothL1Loss" smooth_l1_loss_param { sigma: 3 }`, Bottom: [][]int{{3, 8}, {3, 8}, {3, 8}, {3, 8}}, NoPropagate: []int{2, 3}},
		layertest.Parity{Layer: `type: "SmoothL1Loss"`, Bottom: [][]int{{4, 6}, {4, 6}}},
	)
}

// TestSmoothL1LossForward checks both zones of f with sigma 1 (boundary
// at |d| = 1), the weights and the division by the batch.
func TestSmoothL1LossForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "SmoothL1Loss"`)
	a, b := layertest.Blob[float64](t, 2, 2), layertest.Blob[float64](t, 2, 2)
	in, out := layertest.Blob[float64](t, 2, 2), layertest.Blob[float64](t, 2, 2)
	copy(a.MutableCPUData(), []float64{0.5, 3, -2, 0})
	copy(b.MutableCPUData(), []float64{0, 1, 0, 0.2})
	copy(in.MutableCPUData(), []float64{1, 1, 0.25, 1})
	copy(out.MutableCPUData(), []float64{1, 2, 1, 1})
	top := layertest.Blob[float64](t)
	bottom := []*blob.Blob[float64]{a, b, in, out}
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{top})
	loss := layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	// d = 0.5, 2, -0.5, -0.2: 0.125 + 2*(2-0.5) + 0.125 + 0.02, over 2.
	if want := (0.125 + 3 + 0.125 + 0.02) / 2; math.Abs(loss-want) > 1e-12 {
		t.Errorf("loss %v, want %v", loss, want)
	}
}

// fillSmoothL1 fills the prediction and target with gaussians and the
// weights with positive values. (SmoothL1's kinks are at |d| =
// 1/sigma^2; gaussian inputs rarely land within the finite-difference step
// of one.)
func fillSmoothL1(i int, b *blob.Blob[float64]) {
	if i >= 2 {
		layertest.FillUniform(b, 0.2, 1.5, uint64(40+i))
		return
	}
	layertest.FillGaussian(b, 0, 1, uint64(30+i))
}
