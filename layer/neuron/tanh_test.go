package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(layertest.GradCase{Name: "TanH", Layer: `type: "TanH" bottom: "x" top: "y"`,
		Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise})
	cases.AddParity(layertest.Parity{Layer: `type: "TanH" bottom: "x" top: "y"`,
		Bottom: [][]int{{2, 3, 40, 50}}, Lo: -4, Hi: 4})
}

func TestTanHForward(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	r := runNeuron[float64](t, `type: "TanH"`, neuronShape, x, dy, false)
	for i, v := range x {
		want := (math.Exp(2*v) - 1) / (math.Exp(2*v) + 1)
		if math.Abs(r.y[i]-want) > 1e-14 {
			t.Fatalf("y[%d] = %v, want %v", i, r.y[i], want)
		}
		if g := dy[i] * (1 - want*want); math.Abs(r.dx[i]-g) > 1e-14 {
			t.Fatalf("dx[%d] = %v, want %v", i, r.dx[i], g)
		}
	}
}

func TestTanHInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "TanH"`, neuronGaussian(120, 1))
}
