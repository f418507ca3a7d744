package neuron_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// logText is the Log layer with the given parameters.
func logText(base, scale, shift float64) string {
	return fmt.Sprintf(`type: "Log" bottom: "x" top: "y" log_param { base: %s scale: %s shift: %s }`, layertest.Ftoa(base), layertest.Ftoa(scale), layertest.Ftoa(shift))
}

// logCases are Caffe's (base, scale, shift) cases, plus base e scaled and
// shifted.
var logCases = []struct{ base, scale, shift float64 }{
	{-1, 1, 0}, {2, 1, 0}, {2, 1, 1}, {2, 3, 0}, {2, 3, 1}, {-1, 0.5, 0.25}, {10, 2, 0.5},
}

func init() {
	// Caffe's Log gradient test: positive data exp(N(0, 1)), threshold
	// 1e-2.
	for _, c := range logCases {
		cases.AddGrad(layertest.GradCase{Name: fmt.Sprintf("Log/base%v,scale%v,shift%v", c.base, c.scale, c.shift),
			Layer: logText(c.base, c.scale, c.shift), Bottom: [][]int{neuronShape}, Fill: neuronFillPositive,
			Mode: layertest.Eltwise, Threshold: 1e-2})
	}
	cases.AddParity(
		layertest.Parity{Layer: logText(2, 3, 1), Bottom: [][]int{{2, 3, 40, 50}}, Lo: 0.01, Hi: 5},
		layertest.Parity{Layer: `type: "Log" bottom: "x" top: "y"`, Bottom: [][]int{{2, 3, 40, 50}}, Lo: 0.1, Hi: 10},
	)
}

func TestLogForward(t *testing.T) {
	for _, c := range logCases {
		x, dy := neuronPositive(120, 1), neuronGaussian(120, 2)
		r := runNeuron[float64](t, logText(c.base, c.scale, c.shift), neuronShape, x, dy, false)
		lnBase := 1.0
		if c.base != -1 {
			lnBase = math.Log(c.base)
		}
		for i, v := range x {
			want := math.Log(c.shift+c.scale*v) / lnBase
			if math.Abs(r.y[i]-want) > 1e-14*math.Max(1, math.Abs(want)) {
				t.Fatalf("%v: y[%d] = %v, want %v", c, i, r.y[i], want)
			}
			if g := dy[i] * c.scale / ((c.shift + c.scale*v) * lnBase); math.Abs(r.dx[i]-g) > 1e-14*math.Max(1, math.Abs(g)) {
				t.Fatalf("%v: dx[%d] = %v, want %v", c, i, r.dx[i], g)
			}
		}
	}
}

func TestLogInPlace(t *testing.T) {
	checkNeuronInPlace(t, logText(2, 3, 1), neuronPositive(120, 1))
}

func TestLogErrors(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"0", "base must be positive"}, {"-3", "base must be positive"}, {"1", "must not be 1"},
	} {
		_, err := layer.New[float32](layertest.Param(t, `name: "log2" type: "Log" log_param { base: `+c.base+` }`))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "log2") {
			t.Errorf("base %s: err = %v, want one naming log2 and containing %q", c.base, err, c.want)
		}
	}
}
