package loss_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

func init() {
	labels := func(classes, ignoreEvery int) func(i int, v []float64) {
		return func(i int, v []float64) {
			r := mathfn.NewRNG(uint64(30 + i))
			for j := range v {
				switch {
				case i == 0:
					v[j] = r.NormFloat64()
				case ignoreEvery > 0 && j%ignoreEvery == 0:
					v[j] = -1
				default:
					v[j] = float64(r.IntN(classes))
				}
			}
		}
	}
	cases.AddParity(
		layertest.Parity{Layer: `type: "Accuracy" top: "acc" top: "per_class" accuracy_param { top_k: 2 ignore_label: -1 }`,
			Bottom: [][]int{{40, 10, 8, 8}, {40, 1, 8, 8}}, NoPropagate: []int{0, 1}, Fill: labels(10, 7)},
		layertest.Parity{Layer: `type: "Accuracy"`,
			Bottom: [][]int{{2000, 5}, {2000}}, NoPropagate: []int{0, 1}, Fill: labels(5, 0)},
	)
}

// accuracyFixture is Caffe's: 100 x 10 gaussian scores, labels in [0, 10).
func accuracyFixture(t *testing.T, scoreShape, labelShape []int, classes int) (*blob.Blob[float64], *blob.Blob[float64]) {
	t.Helper()
	scores, labels := layertest.Blob[float64](t, scoreShape...), layertest.Blob[float64](t, labelShape...)
	layertest.FillGaussian(scores, 0, 1, 1701)
	r := mathfn.NewRNG(1702)
	for i := range labels.MutableCPUData() {
		labels.MutableCPUData()[i] = float64(r.IntN(classes))
	}
	return scores, labels
}

func runAccuracy(t *testing.T, param string, scores, labels *blob.Blob[float64], nTop int) []*blob.Blob[float64] {
	t.Helper()
	l := layertest.New[float64](t, `type: "Accuracy" `+param)
	top := layertest.Blobs[float64](t, nTop)
	layertest.SetUp(t, l, []*blob.Blob[float64]{scores, labels}, top)
	if loss := layertest.Forward(t, l, []*blob.Blob[float64]{scores, labels}, top); loss != 0 {
		t.Errorf("Accuracy contributes %v to the loss, want 0", loss)
	}
	return top
}

// accuracyRef counts, for positions (n, s) of an N x C x S score blob, the
// correct ones (fewer than k classes scoring strictly higher than the
// label; the gaussian scores have no ties) per class and in all.
func accuracyRef(scores, labels []float64, classes, inner, k int, ignore *int) (acc float64, perClass []float64) {
	correct, count := 0, 0
	classCorrect, classCount := make([]float64, classes), make([]float64, classes)
	for pos, v := range labels {
		label := int(v)
		if ignore != nil && label == *ignore {
			continue
		}
		n, s := pos/inner, pos%inner
		p := scores[(n*classes+label)*inner+s]
		higher := 0
		for c := range classes {
			if scores[(n*classes+c)*inner+s] > p {
				higher++
			}
		}
		count++
		classCount[label]++
		if higher < k {
			correct++
			classCorrect[label]++
		}
	}
	for c := range classes {
		if classCount[c] > 0 {
			classCorrect[c] /= classCount[c]
		}
	}
	return float64(correct) / float64(count), classCorrect
}

func TestAccuracySetup(t *testing.T) {
	scores, labels := accuracyFixture(t, []int{100, 10}, []int{100}, 10)
	top := runAccuracy(t, "top: 'a' top: 'b' accuracy_param { top_k: 5 }", scores, labels, 2)
	if top[0].NumAxes() != 0 || top[0].Count() != 1 || !slices.Equal(top[1].Shape(), []int{10}) {
		t.Errorf("tops %s and %s, want a scalar and [10]", top[0].ShapeString(), top[1].ShapeString())
	}
}

// Caffe's TestForward, TestForwardTopK, TestForwardWithSpatialAxes,
// TestForwardPerClass and the ignore-label variants.
func TestAccuracyForward(t *testing.T) {
	minus1 := -1
	for _, c := range []struct {
		name, param   string
		scores, label []int
		inner, k      int
		ignoreEvery   int
	}{
		{"top1", "", []int{100, 10}, []int{100, 1}, 1, 1, 0},
		{"top3", "accuracy_param { top_k: 3 }", []int{100, 10}, []int{100}, 1, 3, 0},
		{"spatial", "", []int{2, 10, 4, 5}, []int{2, 1, 4, 5}, 20, 1, 0},
		{"ignore", "accuracy_param { ignore_label: -1 }", []int{100, 10}, []int{100}, 1, 1, 3},
		{"ignore/top3/spatial", "accuracy_param { ignore_label: -1 top_k: 3 }", []int{4, 10, 3, 5}, []int{4, 3, 5}, 15, 3, 4},
		{"axis2", "accuracy_param { axis: 2 }", []int{3, 4, 10}, []int{3, 4}, 1, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			scores, labels := accuracyFixture(t, c.scores, c.label, 10)
			var ignore *int
			if c.ignoreEvery > 0 {
				ignore = &minus1
				for i := 0; i < labels.Count(); i += c.ignoreEvery {
					labels.MutableCPUData()[i] = -1
				}
			}
			top := runAccuracy(t, "top: 'a' top: 'b' "+c.param, scores, labels, 2)
			acc, perClass := accuracyRef(scores.CPUData(), labels.CPUData(), 10, c.inner, c.k, ignore)
			if math.Abs(top[0].CPUData()[0]-acc) > 1e-12 {
				t.Errorf("accuracy %v, want %v", top[0].CPUData()[0], acc)
			}
			layertest.CheckClose(t, "per-class accuracy", top[1].CPUData(), perClass, 1e-12)
			if one := runAccuracy(t, c.param, scores, labels, 1); one[0].CPUData()[0] != top[0].CPUData()[0] {
				t.Errorf("with one top: %v, with two: %v", one[0].CPUData()[0], top[0].CPUData()[0])
			}
		})
	}
}

// As in Caffe, a class scoring as high as the true one counts as better:
// with all scores equal only top_k = classes is correct; a class with no
// samples has accuracy 0; all positions ignored gives 0.
func TestAccuracyTiesAndEmpty(t *testing.T) {
	scores, labels := layertest.Blob[float64](t, 3, 4), layertest.Blob[float64](t, 3)
	copy(labels.MutableCPUData(), []float64{0, 2, 2})
	for k, want := range map[int]float64{1: 0, 3: 0, 4: 1} {
		top := runAccuracy(t, fmt.Sprintf("top: 'a' top: 'b' accuracy_param { top_k: %d }", k), scores, labels, 2)
		if top[0].CPUData()[0] != want {
			t.Errorf("top_k %d over ties: accuracy %v, want %v", k, top[0].CPUData()[0], want)
		}
		layertest.CheckClose(t, "per class", top[1].CPUData(), []float64{want, 0, want, 0}, 0)
	}
	copy(labels.MutableCPUData(), []float64{2, 2, 2})
	top := runAccuracy(t, "accuracy_param { ignore_label: 2 }", scores, labels, 1)
	if top[0].CPUData()[0] != 0 {
		t.Errorf("every position ignored: accuracy %v, want 0", top[0].CPUData()[0])
	}
}

func TestAccuracyErrors(t *testing.T) {
	setUp := func(param string, scores, labels []int, values []float32) error {
		l := layertest.New[float32](t, `name: "acc" type: "Accuracy" `+param)
		s, lab := layertest.Blob[float32](t, scores...), layertest.Blob[float32](t, labels...)
		copy(lab.MutableCPUData(), values)
		top := []*blob.Blob[float32]{layertest.Blob[float32](t)}
		if err := layer.SetUp(l, []*blob.Blob[float32]{s, lab}, top); err != nil {
			return err
		}
		if _, err := layer.Forward(l, []*blob.Blob[float32]{s, lab}, top); err != nil {
			return err
		}
		return layer.Backward(l, top, []bool{true, false}, []*blob.Blob[float32]{s, lab})
	}
	for _, c := range []struct {
		param          string
		scores, labels []int
		values         []float32
		want           string
	}{
		{"accuracy_param { top_k: 5 }", []int{2, 4}, []int{2}, nil, "top_k must be less than or equal to the number of classes"},
		{"", []int{2, 4}, []int{3}, nil, "number of labels must match number of predictions"},
		{"", []int{2, 4}, []int{2}, []float32{1, 4}, "label 4 at position 1 is not a class in [0, 4)"},
		{"accuracy_param { ignore_label: 9 }", []int{2, 4}, []int{2}, []float32{9, -1}, "label -1 at position 1"},
		{"", []int{2, 4}, []int{2}, []float32{1, 2}, "cannot backpropagate"},
	} {
		err := setUp(c.param, c.scores, c.labels, c.values)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"acc" (Accuracy)`) {
			t.Errorf("%s %v: err = %v, want %q", c.param, c.values, err, c.want)
		}
	}
}
