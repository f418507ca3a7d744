package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "ELU", Layer: `type: "ELU" bottom: "x" top: "y" elu_param { alpha: 0.5 }`,
			Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01},
		layertest.GradCase{Name: "ELU/asReLU", Layer: `type: "ELU" bottom: "x" top: "y" elu_param { alpha: 0 }`,
			Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01},
	)
	cases.AddParity(layertest.Parity{Layer: `type: "ELU" bottom: "x" top: "y" elu_param { alpha: 0.7 }`,
		Bottom: [][]int{{2, 3, 40, 50}}, Lo: -4, Hi: 3})
}

func TestELUForward(t *testing.T) {
	for _, alpha := range []float64{0.5, 1, 0} {
		x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
		r := runNeuron[float64](t, `type: "ELU" elu_param { alpha: `+layertest.Ftoa(alpha)+` }`, neuronShape, x, dy, false)
		for i, v := range x {
			want, grad := v, 1.0
			if v <= 0 {
				want = alpha * (math.Exp(v) - 1)
				grad = alpha * math.Exp(v)
			}
			if math.Abs(r.y[i]-want) > 1e-15 {
				t.Fatalf("alpha %v: y[%d] = %v, want %v", alpha, i, r.y[i], want)
			}
			if math.Abs(r.dx[i]-dy[i]*grad) > 1e-15 {
				t.Fatalf("alpha %v: dx[%d] = %v, want %v", alpha, i, r.dx[i], dy[i]*grad)
			}
		}
	}
}

func TestELUDefaultAlpha(t *testing.T) {
	r := runNeuron[float64](t, `type: "ELU"`, []int{2}, []float64{-1, 2}, nil, false)
	layertest.CheckClose(t, "top", r.y, []float64{math.Expm1(-1), 2}, 1e-15)
}

func TestELUInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "ELU" elu_param { alpha: 0.5 }`, neuronGaussian(120, 1))
}
