package neuron_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// expText is the Exp layer with the given parameters.
func expText(base, scale, shift float64) string {
	return fmt.Sprintf(`type: "Exp" bottom: "x" top: "y" exp_param { base: %s scale: %s shift: %s }`, layertest.Ftoa(base), layertest.Ftoa(scale), layertest.Ftoa(shift))
}

// expCases are Caffe's (base, scale, shift) cases, plus base e shifted.
var expCases = []struct{ base, scale, shift float64 }{
	{-1, 1, 0}, {2, 1, 0}, {2, 1, 1}, {2, 3, 0}, {2, 3, 1}, {-1, 0.5, -1.5}, {0.5, 2, 0.5},
}

func init() {
	for _, c := range expCases {
		cases.AddGrad(layertest.GradCase{Name: fmt.Sprintf("Exp/base%v,scale%v,shift%v", c.base, c.scale, c.shift),
			Layer: expText(c.base, c.scale, c.shift), Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise})
	}
	cases.AddParity(
		layertest.Parity{Layer: expText(2, 3, 1), Bottom: [][]int{{2, 3, 40, 50}}},
		layertest.Parity{Layer: `type: "Exp" bottom: "x" top: "y"`, Bottom: [][]int{{2, 3, 40, 50}}, Lo: -5, Hi: 5},
	)
}

func TestExpForward(t *testing.T) {
	for _, c := range expCases {
		x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
		r := runNeuron[float64](t, expText(c.base, c.scale, c.shift), neuronShape, x, dy, false)
		lnBase := 1.0
		if c.base != -1 {
			lnBase = math.Log(c.base)
		}
		for i, v := range x {
			want := math.Exp(lnBase * (c.shift + c.scale*v))
			if math.Abs(r.y[i]-want) > 1e-13*math.Max(1, want) {
				t.Fatalf("%v: y[%d] = %v, want %v", c, i, r.y[i], want)
			}
			if g := dy[i] * want * lnBase * c.scale; math.Abs(r.dx[i]-g) > 1e-13*math.Max(1, math.Abs(g)) {
				t.Fatalf("%v: dx[%d] = %v, want %v", c, i, r.dx[i], g)
			}
		}
	}
}

func TestExpInPlace(t *testing.T) {
	checkNeuronInPlace(t, expText(2, 3, 1), neuronGaussian(120, 1))
}

func TestExpErrors(t *testing.T) {
	for _, base := range []string{"0", "-2", "-0.5", "inf"} {
		_, err := layer.New[float32](layertest.Param(t, `name: "exp2" type: "Exp" exp_param { base: `+base+` }`))
		if err == nil || !strings.Contains(err.Error(), "base must be positive") || !strings.Contains(err.Error(), "exp2") {
			t.Errorf("base %s: err = %v", base, err)
		}
	}
}
