package neuron_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

func init() {
	// The checker reseeds the layer's generator before every forward pass,
	// so each TRAIN pass draws the same mask.
	cases.AddGrad(
		layertest.GradCase{Name: "Dropout", Layer: `type: "Dropout" bottom: "x" top: "y"`, Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise},
		layertest.GradCase{Name: "Dropout/ratio0.75", Layer: `type: "Dropout" bottom: "x" top: "y" dropout_param { dropout_ratio: 0.75 }`,
			Bottom: [][]int{neuronShape}, Mode: layertest.Summed},
		layertest.GradCase{Name: "Dropout/TEST", Layer: `type: "Dropout" bottom: "x" top: "y" phase: TEST`, Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise},
	)
	// The CPU and GPU draw different masks, so parity is checked in the
	// TEST phase; TestDropoutTrain checks the TRAIN statistics.
	cases.AddParity(layertest.Parity{Layer: `type: "Dropout" bottom: "x" top: "y" phase: TEST dropout_param { dropout_ratio: 0.3 }`,
		Bottom: [][]int{{2, 3, 40, 50}}})
}

// TestDropoutTrain is Caffe's TestDropoutForward on a large blob: the
// fraction of dropped elements is near the ratio, kept elements are scaled
// by 1 / (1 - ratio), and the backward pass applies the same mask.
func TestDropoutTrain(t *testing.T) {
	const n = 100000
	for _, ratio := range []float64{0.5, 0.75, 0.1, 0} {
		text := `type: "Dropout"`
		if ratio != 0.5 { // 0.5 is the default
			text += ` dropout_param { dropout_ratio: ` + layertest.Ftoa(ratio) + ` }`
		}
		x, dy := neuronGaussian(n, 1), neuronGaussian(n, 2)
		r := runNeuron[float64](t, text, []int{n}, x, dy, false)
		scale := 1 / (1 - float64(float32(ratio)))
		kept := 0
		for i, v := range x {
			if r.y[i] == 0 {
				if r.dx[i] != 0 {
					t.Fatalf("ratio %v: element %d dropped but dx = %v", ratio, i, r.dx[i])
				}
				continue
			}
			kept++
			if r.y[i] != v*scale || r.dx[i] != dy[i]*scale {
				t.Fatalf("ratio %v: element %d kept as y = %v, dx = %v; want %v, %v", ratio, i, r.y[i], r.dx[i], v*scale, dy[i]*scale)
			}
		}
		dropped := 1 - float64(kept)/n
		if stdErr := math.Sqrt(ratio * (1 - ratio) / n); math.Abs(dropped-ratio) > 4*stdErr+1e-12 {
			t.Errorf("ratio %v: dropped %v of the elements (standard error %v)", ratio, dropped, stdErr)
		}
	}
}

// TestDropoutNewMaskEachPass checks that every TRAIN forward pass draws a
// new mask.
func TestDropoutNewMaskEachPass(t *testing.T) {
	l := layertest.New[float64](t, `type: "Dropout"`)
	l.LayerBase().SetRNG(mathfn.NewRNG(3))
	x, y := layertest.Blob[float64](t, 1000), layertest.Blob[float64](t)
	mathfn.Set(1000, 1, x.MutableCPUData())
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	first := append([]float64(nil), y.CPUData()...)
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	same := 0
	for i, v := range y.CPUData() {
		if v == first[i] {
			same++
		}
	}
	if same == 1000 {
		t.Error("two TRAIN passes drew the same mask")
	}
}

// TestDropoutTestPhase: in the TEST phase the layer is the identity, in
// place or not.
func TestDropoutTestPhase(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	for _, inPlace := range []bool{false, true} {
		r := runNeuron[float64](t, `type: "Dropout" phase: TEST dropout_param { dropout_ratio: 0.9 }`, neuronShape, x, dy, inPlace)
		layertest.CheckClose(t, "TEST top", r.y, x, 0)
		layertest.CheckClose(t, "TEST bottom diff", r.dx, dy, 0)
	}
}

func TestDropoutInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "Dropout" dropout_param { dropout_ratio: 0.4 }`, neuronGaussian(120, 1))
}

func TestDropoutErrors(t *testing.T) {
	for _, ratio := range []string{"1", "-0.1", "1.5", "nan"} {
		_, err := layer.New[float32](layertest.Param(t, `name: "drop6" type: "Dropout" dropout_param { dropout_ratio: `+ratio+` }`))
		if err == nil || !strings.Contains(err.Error(), "dropout_ratio must be in [0, 1)") || !strings.Contains(err.Error(), "drop6") {
			t.Errorf("ratio %s: err = %v", ratio, err)
		}
	}
}
