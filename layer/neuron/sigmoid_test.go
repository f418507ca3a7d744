package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(layertest.GradCase{Name: "Sigmoid", Layer: `type: "Sigmoid" bottom: "x" top: "y"`,
		Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01})
	cases.AddParity(layertest.Parity{Layer: `type: "Sigmoid" bottom: "x" top: "y"`,
		Bottom: [][]int{{2, 3, 40, 50}}, Lo: -8, Hi: 8})
}

func TestSigmoidForward(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	x = append(x[:118], -800, 800) // no overflow at the extremes
	r := runNeuron[float64](t, `type: "Sigmoid"`, neuronShape, x, dy, false)
	for i, v := range x {
		want := 1 / (1 + math.Exp(-v))
		if math.Abs(r.y[i]-want) > 1e-15 || r.y[i] < 0 || r.y[i] > 1 {
			t.Fatalf("y[%d] = %v, want %v", i, r.y[i], want)
		}
		if g := dy[i] * want * (1 - want); math.Abs(r.dx[i]-g) > 1e-15 {
			t.Fatalf("dx[%d] = %v, want %v", i, r.dx[i], g)
		}
	}
}

func TestSigmoidInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "Sigmoid"`, neuronGaussian(120, 1))
}
