package loss_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// labelFill fills bottom 1 with integer labels in [0, classes) and bottom 0
// with gaussian scores.
func labelFill(classes int) func(i int, b *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		if i == 0 {
			layertest.FillGaussian(b, 0, 1, 11)
			return
		}
		for j := range b.Count() {
			b.MutableCPUData()[j] = float64((j*7 + 3) % classes)
		}
	}
}

func init() {
	const loss = `type: "SoftmaxWithLoss" bottom: "x" bottom: "label" top: "loss" %s`
	for _, extra := range []string{"", "loss_param { ignore_label: 0 }", "loss_param { normalize: false }", "loss_param { normalization: FULL ignore_label: 2 }"} {
		cases.AddGrad(layertest.GradCase{Name: "SoftmaxWithLoss/" + extra, Layer: fmt.Sprintf(loss, extra),
			Bottom: [][]int{{10, 5, 2, 3}, {10, 1, 2, 3}}, Fill: labelFill(5), FirstBottomOnly: true, Threshold: 1e-2})
	}
	cases.AddParity(layertest.Parity{Layer: fmt.Sprintf(loss, "loss_param { ignore_label: 1 } top: \"prob\" loss_weight: 1 loss_weight: 0"),
		Bottom: [][]int{{16, 7, 3, 2}, {16, 3, 2}}, NoPropagate: []int{1},
		Fill: func(i int, v []float64) {
			for j := range v {
				if i == 0 {
					v[j] = math.Sin(float64(j)) * 3
				} else {
					v[j] = float64((j * 5) % 7)
				}
			}
		}})
}

func softmaxLoss(t *testing.T, param string, scores []float64, shape []int, labels []float64) float64 {
	t.Helper()
	l := layertest.New[float64](t, `type: "SoftmaxWithLoss" `+param)
	x := layertest.Blob[float64](t, shape...)
	copy(x.MutableCPUData(), scores)
	lab := layertest.Blob[float64](t, len(labels))
	copy(lab.MutableCPUData(), labels)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x, lab}, []*blob.Blob[float64]{top})
	loss := layertest.Forward(t, l, []*blob.Blob[float64]{x, lab}, []*blob.Blob[float64]{top})
	if top.CPUData()[0] != loss {
		t.Errorf("Forward returned %v but the top holds %v (loss weight 1)", loss, top.CPUData()[0])
	}
	return loss
}

// Two samples, three classes, worked by hand: the loss is the mean of
// -log softmax(scores)[label].
func TestSoftmaxWithLossHandComputed(t *testing.T) {
	scores := []float64{1, 2, 3, 0, 0, math.Log(2)}
	got := softmaxLoss(t, "", scores, []int{2, 3}, []float64{2, 0})
	p0 := math.Exp(3) / (math.Exp(1) + math.Exp(2) + math.Exp(3))
	p1 := 1.0 / 4
	if want := -(math.Log(p0) + math.Log(p1)) / 2; math.Abs(got-want) > 1e-12 {
		t.Errorf("loss %v, want %v", got, want)
	}
}

// Caffe's TestForwardIgnoreLabel: with normalization NONE, the full loss is
// the sum of the losses with each label value ignored in turn, divided by
// (classes - 1).
func TestSoftmaxWithLossIgnoreLabel(t *testing.T) {
	const classes = 5
	shape := []int{10, classes, 2, 3}
	scores := make([]float64, 10*classes*6)
	for i := range scores {
		scores[i] = math.Cos(float64(i))
	}
	labels := make([]float64, 60)
	for i := range labels {
		labels[i] = float64(i % classes)
	}
	full := softmaxLoss(t, "loss_param { normalization: NONE }", scores, shape, labels)
	sum := 0.0
	for ignore := range classes {
		sum += softmaxLoss(t, fmt.Sprintf("loss_param { normalization: NONE ignore_label: %d }", ignore), scores, shape, labels)
	}
	if math.Abs(full-sum/(classes-1)) > 1e-9 {
		t.Errorf("full loss %v, sum over ignored labels / 4 = %v", full, sum/(classes-1))
	}
}

func TestSoftmaxWithLossNormalization(t *testing.T) {
	scores := []float64{1, 2, 0.5, -1, 3, 0, 2, 2}
	shape := []int{4, 2}
	labels := []float64{0, 1, 1, 9} // the last one ignored
	none := softmaxLoss(t, "loss_param { ignore_label: 9 normalization: NONE }", scores, shape, labels)
	for param, divisor := range map[string]float64{
		"loss_param { ignore_label: 9 }":                           3, // VALID by default
		"loss_param { ignore_label: 9 normalization: FULL }":       4,
		"loss_param { ignore_label: 9 normalization: BATCH_SIZE }": 4,
		"loss_param { ignore_label: 9 normalize: true }":           3,
		"loss_param { ignore_label: 9 normalize: false }":          4,
	} {
		if got := softmaxLoss(t, param, scores, shape, labels); math.Abs(got-none/divisor) > 1e-12 {
			t.Errorf("%s: loss %v, want %v / %v", param, got, none, divisor)
		}
	}
}

func TestSoftmaxWithLossBadLabels(t *testing.T) {
	l := layertest.New[float32](t, `name: "loss" type: "SoftmaxWithLoss"`)
	x, lab, top := layertest.Blob[float32](t, 2, 3), layertest.Blob[float32](t, 2), layertest.Blob[float32](t)
	copy(lab.MutableCPUData(), []float32{1, 3})
	layertest.SetUp(t, l, []*blob.Blob[float32]{x, lab}, []*blob.Blob[float32]{top})
	_, err := layer.Forward(l, []*blob.Blob[float32]{x, lab}, []*blob.Blob[float32]{top})
	if err == nil || !strings.Contains(err.Error(), "label 3 at position 1 is not a class in [0, 3)") || !strings.Contains(err.Error(), `"loss"`) {
		t.Errorf("out-of-range label: err = %v", err)
	}
	wrong := layertest.Blob[float32](t, 3)
	err = layer.SetUp(layertest.New[float32](t, `name: "loss" type: "SoftmaxWithLoss"`), []*blob.Blob[float32]{x, wrong}, []*blob.Blob[float32]{top})
	if err == nil || !strings.Contains(err.Error(), "number of labels must match") {
		t.Errorf("label count mismatch: err = %v", err)
	}
	if err := layer.Backward(l, []*blob.Blob[float32]{top}, []bool{true, true}, []*blob.Blob[float32]{x, lab}); err == nil || !strings.Contains(err.Error(), "cannot backpropagate to label") {
		t.Errorf("propagate to labels: err = %v", err)
	}
}
