package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(layertest.GradCase{Name: "BNLL", Layer: `type: "BNLL" bottom: "x" top: "y"`, Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise})
	cases.AddParity(
		layertest.Parity{Layer: `type: "BNLL" bottom: "x" top: "y"`, Bottom: [][]int{{2, 3, 40, 50}}},
		// Past the exponent's cap of 50 on both sides.
		layertest.Parity{Layer: `type: "BNLL" bottom: "x" top: "y"`, Bottom: [][]int{{3000}}, Lo: -80, Hi: 80},
	)
}

func TestBNLLForward(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	copy(x, []float64{-1000, -60, 0, 60, 1000}) // no overflow at the extremes
	r := runNeuron[float64](t, `type: "BNLL"`, neuronShape, x, dy, false)
	for i, v := range x {
		// Caffe's checks: y >= 0 and y >= x; then softplus and its
		// derivative, the sigmoid.
		if r.y[i] < 0 || r.y[i] < v {
			t.Fatalf("y[%d] = %v for x = %v", i, r.y[i], v)
		}
		want := math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v)))
		if math.Abs(r.y[i]-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Fatalf("y[%d] = %v, want %v", i, r.y[i], want)
		}
		if g := dy[i] / (1 + math.Exp(-v)); math.Abs(r.dx[i]-g) > 1e-15 {
			t.Fatalf("dx[%d] = %v, want %v", i, r.dx[i], g)
		}
	}
}

func TestBNLLInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "BNLL"`, neuronGaussian(120, 1))
}
