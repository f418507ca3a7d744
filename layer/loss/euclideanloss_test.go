package loss_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	// Caffe's TestGradient: both bottoms 10x5x1x1, loss weight 3.7,
	// threshold 1e-2, every bottom checked.
	cases.AddGrad(layertest.GradCase{Name: "EuclideanLoss", Layer: `type: "EuclideanLoss" loss_weight: 3.7`,
		Bottom: [][]int{{10, 5, 1, 1}, {10, 5, 1, 1}}, Threshold: 1e-2})
	cases.AddParity(layertest.Parity{Layer: `type: "EuclideanLoss" loss_weight: 0.5`, Bottom: [][]int{{16, 300}, {16, 3, 100}}})
}

func euclideanLoss(t *testing.T, param string, a, b *blob.Blob[float64]) (float64, *blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, `type: "EuclideanLoss" `+param)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{a, b}, []*blob.Blob[float64]{top})
	loss := layertest.Forward(t, l, []*blob.Blob[float64]{a, b}, []*blob.Blob[float64]{top})
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{true, true}, []*blob.Blob[float64]{a, b})
	return loss, top
}

// Caffe's TestForward: the loss is sum((a-b)^2) / (2N), and a loss weight
// scales what Forward returns but not the top.
func TestEuclideanLossForward(t *testing.T) {
	a, b := layertest.Blob[float64](t, 10, 5, 1, 1), layertest.Blob[float64](t, 10, 5, 1, 1)
	layertest.FillGaussian(a, 0, 1, 1)
	layertest.FillGaussian(b, 0, 1, 2)
	want := 0.0
	for i := range a.CPUData() {
		d := a.CPUData()[i] - b.CPUData()[i]
		want += d * d / 20
	}
	loss, top := euclideanLoss(t, "", a, b)
	if math.Abs(loss-want) > 1e-12 || top.CPUData()[0] != loss {
		t.Errorf("loss %v (top %v), want %v", loss, top.CPUData()[0], want)
	}
	weighted, top := euclideanLoss(t, "loss_weight: 3.7", a, b)
	if math.Abs(weighted-float64(float32(3.7))*want) > 1e-12 || math.Abs(top.CPUData()[0]-want) > 1e-12 {
		t.Errorf("loss weight 3.7: loss %v (top %v), want %v (top %v)", weighted, top.CPUData()[0], 3.7*want, want)
	}
	// The gradients: ±(a - b) * weight / N.
	for i := range a.CPUData() {
		g := (a.CPUData()[i] - b.CPUData()[i]) * float64(float32(3.7)) / 10
		if math.Abs(a.CPUDiff()[i]-g) > 1e-12 || math.Abs(b.CPUDiff()[i]+g) > 1e-12 {
			t.Fatalf("element %d: diffs %v, %v, want %v, %v", i, a.CPUDiff()[i], b.CPUDiff()[i], g, -g)
		}
	}
}

// Both bottoms may be forced to back-propagate: neither is a label.
func TestEuclideanLossAllowsForceBackward(t *testing.T) {
	l := layertest.New[float32](t, `type: "EuclideanLoss"`)
	if !layer.AllowForceBackward(l, 0) || !layer.AllowForceBackward(l, 1) {
		t.Error("EuclideanLoss must allow force_backward on both bottoms")
	}
}

func TestEuclideanLossErrors(t *testing.T) {
	for _, c := range []struct {
		a, b []int
		want string
	}{
		{[]int{4, 3}, []int{4, 2}, "inputs must have the same count"},
		{[]int{4, 3}, []int{3, 4}, "same first dimension"},
	} {
		l := layertest.New[float32](t, `name: "l2" type: "EuclideanLoss"`)
		err := layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, c.a...), layertest.Blob[float32](t, c.b...)}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"l2" (EuclideanLoss)`) {
			t.Errorf("%v vs %v: err = %v, want %q", c.a, c.b, err, c.want)
		}
	}
}
