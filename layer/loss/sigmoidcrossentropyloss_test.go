package loss_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// sceFill fills the scores from N(0, 1) and the targets from U(0, 1), as
// Caffe's test does; with ignore, every third target becomes -1.
func sceFill(ignore bool) func(i int, b *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		if i == 0 {
			layertest.FillGaussian(b, 0, 1, 21)
			return
		}
		layertest.FillUniform(b, 0, 1, 22)
		if ignore {
			for j := 0; j < b.Count(); j += 3 {
				b.MutableCPUData()[j] = -1
			}
		}
	}
}

func init() {
	const sce = `type: "SigmoidCrossEntropyLoss" loss_weight: 3.7 `
	cases.AddGrad(
		layertest.GradCase{Name: "SigmoidCrossEntropyLoss", Layer: sce, Bottom: [][]int{{10, 5, 1, 1}, {10, 5, 1, 1}},
			Fill: sceFill(false), FirstBottomOnly: true, Threshold: 1e-2},
		layertest.GradCase{Name: "SigmoidCrossEntropyLoss/ignore", Layer: sce + `loss_param { ignore_label: -1 }`,
			Bottom: [][]int{{10, 5, 1, 1}, {10, 5, 1, 1}}, Fill: sceFill(true), FirstBottomOnly: true, Threshold: 1e-2},
		layertest.GradCase{Name: "SigmoidCrossEntropyLoss/ignore/valid", Layer: sce + `loss_param { ignore_label: -1 normalization: VALID }`,
			Bottom: [][]int{{4, 3, 2}, {4, 6}}, Fill: sceFill(true), FirstBottomOnly: true, Threshold: 1e-2},
	)
	for _, norm := range []string{"", "normalization: VALID", "normalization: FULL"} {
		cases.AddParity(layertest.Parity{Layer: `type: "SigmoidCrossEntropyLoss" loss_param { ignore_label: 3 ` + norm + ` }`,
			Bottom: [][]int{{32, 130}, {32, 130}}, NoPropagate: []int{1},
			Fill: func(i int, v []float64) {
				for j := range v {
					if i == 0 {
						v[j] = 4 * math.Sin(float64(j))
					} else if j%7 == 0 {
						v[j] = 3
					} else {
						v[j] = float64(j%11) / 10
					}
				}
			}})
	}
}

// sceReference is Caffe's test reference: the cross-entropy of the
// targets and the sigmoid of the scores, divided by the batch size.
func sceReference(x, target []float64, num int) float64 {
	loss := 0.0
	for i := range x {
		p := 1 / (1 + math.Exp(-x[i]))
		t := target[i]
		b2f := func(b bool) float64 {
			if b {
				return 1
			}
			return 0
		}
		loss -= t * math.Log(p+b2f(t == 0))
		loss -= (1 - t) * math.Log(1-p+b2f(t == 1))
	}
	return loss / float64(num)
}

func sceLayer(t *testing.T, param string, x, target *blob.Blob[float64]) (layer.Layer[float64], float64) {
	t.Helper()
	l := layertest.New[float64](t, `type: "SigmoidCrossEntropyLoss" `+param)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x, target}, []*blob.Blob[float64]{top})
	return l, layertest.Forward(t, l, []*blob.Blob[float64]{x, target}, []*blob.Blob[float64]{top})
}

// Caffe's TestSigmoidCrossEntropyLoss: with loss weight 3.7, random scores
// and targets, the loss matches the reference.
func TestSigmoidCrossEntropyLossForward(t *testing.T) {
	x, target := layertest.Blob[float64](t, 10, 5, 1, 1), layertest.Blob[float64](t, 10, 5, 1, 1)
	for trial := range 20 {
		layertest.FillGaussian(x, 0, 1, uint64(100+trial))
		layertest.FillUniform(target, 0, 1, uint64(200+trial))
		_, loss := sceLayer(t, "loss_weight: 3.7", x, target)
		want := float64(float32(3.7)) * sceReference(x.CPUData(), target.CPUData(), 10)
		if math.Abs(loss-want) > 1e-10 {
			t.Errorf("trial %d: loss %v, want %v", trial, loss, want)
		}
	}
}

// Large scores must not overflow.
func TestSigmoidCrossEntropyLossStable(t *testing.T) {
	x, target := layertest.Blob[float64](t, 1, 4), layertest.Blob[float64](t, 1, 4)
	copy(x.MutableCPUData(), []float64{1000, -1000, 800, -800})
	copy(target.MutableCPUData(), []float64{1, 0, 0, 1})
	_, loss := sceLayer(t, "", x, target)
	if want := 1600.0; math.Abs(loss-want) > 1e-9 {
		t.Errorf("loss %v, want %v", loss, want)
	}
}

// Caffe's TestIgnoreGradient: the ignored half gets zero gradient, the
// other half not.
func TestSigmoidCrossEntropyLossIgnoreGradient(t *testing.T) {
	x, target := layertest.Blob[float64](t, 10, 5, 1, 1), layertest.Blob[float64](t, 10, 5, 1, 1)
	layertest.FillGaussian(x, 0, 1, 1)
	layertest.FillUniform(target, 0, 1, 2)
	count := target.Count()
	for i := range count / 2 {
		target.MutableCPUData()[i] = -1
	}
	l, _ := sceLayer(t, "loss_param { ignore_label: -1 }", x, target)
	top := []*blob.Blob[float64]{layertest.Blob[float64](t)}
	layertest.SetUp(t, l, []*blob.Blob[float64]{x, target}, top)
	layertest.Forward(t, l, []*blob.Blob[float64]{x, target}, top)
	layertest.Backward(t, l, top, []bool{true, false}, []*blob.Blob[float64]{x, target})
	for i := range count / 2 {
		if x.CPUDiff()[i] != 0 || x.CPUDiff()[i+count/2] == 0 {
			t.Fatalf("diff[%d] = %v (want 0), diff[%d] = %v (want non-zero)", i, x.CPUDiff()[i], i+count/2, x.CPUDiff()[i+count/2])
		}
	}
}

// BATCH_SIZE by default; VALID counts the non-ignored elements.
func TestSigmoidCrossEntropyLossNormalization(t *testing.T) {
	x, target := layertest.Blob[float64](t, 4, 3), layertest.Blob[float64](t, 4, 3)
	layertest.FillGaussian(x, 0, 1, 5)
	layertest.FillUniform(target, 0, 1, 6)
	target.MutableCPUData()[0], target.MutableCPUData()[7] = 5, 5 // ignored
	_, none := sceLayer(t, "loss_param { ignore_label: 5 normalization: NONE }", x, target)
	sum := 0.0
	for i, v := range x.CPUData() {
		if i == 0 || i == 7 {
			continue
		}
		sum += sceReference([]float64{v}, []float64{target.CPUData()[i]}, 1)
	}
	if math.Abs(none-sum) > 1e-12 {
		t.Errorf("NONE: loss %v, want %v", none, sum)
	}
	for param, divisor := range map[string]float64{
		"loss_param { ignore_label: 5 }":                      4,
		"loss_param { ignore_label: 5 normalization: VALID }": 10,
		"loss_param { ignore_label: 5 normalization: FULL }":  12,
		"loss_param { ignore_label: 5 normalize: true }":      10,
		"loss_param { ignore_label: 5 normalize: false }":     4,
	} {
		l, loss := sceLayer(t, param, x, target)
		if math.Abs(loss-none/divisor) > 1e-12 {
			t.Errorf("%s: loss %v, want %v / %v", param, loss, none, divisor)
		}
		top := []*blob.Blob[float64]{layertest.Blob[float64](t)}
		layertest.SetUp(t, l, []*blob.Blob[float64]{x, target}, top)
		layertest.Forward(t, l, []*blob.Blob[float64]{x, target}, top)
		layertest.Backward(t, l, top, []bool{true, false}, []*blob.Blob[float64]{x, target})
		for i, v := range x.CPUData() {
			want := (1/(1+math.Exp(-v)) - target.CPUData()[i]) / divisor
			if i == 0 || i == 7 {
				want = 0
			}
			if math.Abs(x.CPUDiff()[i]-want) > 1e-12 {
				t.Fatalf("%s: diff[%d] = %v, want %v", param, i, x.CPUDiff()[i], want)
			}
		}
	}
}

func TestSigmoidCrossEntropyLossErrors(t *testing.T) {
	l := layertest.New[float32](t, `name: "sce" type: "SigmoidCrossEntropyLoss"`)
	x, target, top := layertest.Blob[float32](t, 2, 3), layertest.Blob[float32](t, 2, 4), layertest.Blob[float32](t)
	if err := layer.SetUp(l, []*blob.Blob[float32]{x, target}, []*blob.Blob[float32]{top}); err == nil || !strings.Contains(err.Error(), "must have the same count") || !strings.Contains(err.Error(), `"sce"`) {
		t.Errorf("count mismatch: err = %v", err)
	}
	target = layertest.Blob[float32](t, 2, 3)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x, target}, []*blob.Blob[float32]{top})
	layertest.Forward(t, l, []*blob.Blob[float32]{x, target}, []*blob.Blob[float32]{top})
	if err := layer.Backward(l, []*blob.Blob[float32]{top}, []bool{true, true}, []*blob.Blob[float32]{x, target}); err == nil || !strings.Contains(err.Error(), "cannot backpropagate to label inputs") {
		t.Errorf("propagate to targets: err = %v", err)
	}
	if layer.AllowForceBackward(l, 1) {
		t.Error("the targets must refuse force_backward")
	}
}
