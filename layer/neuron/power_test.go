package neuron_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// powerText is the Power layer with the given parameters.
func powerText(power, scale, shift float64) string {
	return fmt.Sprintf(`type: "Power" bottom: "x" top: "y" power_param { power: %s scale: %s shift: %s }`, layertest.Ftoa(power), layertest.Ftoa(scale), layertest.Ftoa(shift))
}

// powerFill is the fill of Caffe's Power gradient test: gaussian data, with
// the values below -shift/scale reflected above it so that shift + scale *
// x >= 0 and a fractional power is defined.
func powerFill(power, scale, shift float64) func(int, *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		layertest.FillGaussian(b, 0, 1, uint64(1701+i))
		if power == 0 || power == 1 || power == 2 {
			return
		}
		minValue := -shift / scale
		x := b.MutableCPUData()
		for j, v := range x {
			if v < minValue {
				x[j] = minValue + (minValue - v)
			}
		}
	}
}

func init() {
	// Caffe's test_power_layer.cpp cases, with its checker (step 1e-3,
	// threshold 1e-2, kink at 0).
	for _, c := range []struct {
		name                string
		power, scale, shift float64
	}{
		{"Power", 0.37, 0.83, -2.4},
		{"Power/shiftZero", 0.37, 0.83, 0},
		{"Power/zero", 0, 0.83, -2.4},
		{"Power/one", 1, 0.83, -2.4},
		{"Power/two", 2, 0.34, -2.4},
		{"Power/twoScaleHalf", 2, 0.5, -2.4},
		{"Power/scaleZero", 2, 0, 1.5},
		{"Power/negative", -1.5, 0.5, 3},
	} {
		cases.AddGrad(layertest.GradCase{Name: c.name, Layer: powerText(c.power, c.scale, c.shift), Bottom: [][]int{neuronShape},
			Fill: powerFill(c.power, c.scale, c.shift), Mode: layertest.Eltwise, Step: 1e-3, Threshold: 1e-2, Kink: 0, KinkRange: 0.01})
	}
	cases.AddParity(
		layertest.Parity{Layer: powerText(0.37, 0.83, 0.5), Bottom: [][]int{{2, 3, 40, 50}}, Lo: 0.1, Hi: 2},
		layertest.Parity{Layer: powerText(2, 0.34, -2.4), Bottom: [][]int{{2, 3, 40, 50}}},
		layertest.Parity{Layer: powerText(-1.5, 0.5, 3), Bottom: [][]int{{4, 1000}}},
		layertest.Parity{Layer: powerText(1, 0.83, -2.4), Bottom: [][]int{{3000}}},
		layertest.Parity{Layer: powerText(0, 0.83, -2.4), Bottom: [][]int{{3000}}},
	)
}

// TestPowerForward is Caffe's forward check: y = (shift + scale *
// x)^power, NaN exactly where the definition gives NaN, and never NaN for
// powers 0, 1 and 2; plus the gradient's definition.
func TestPowerForward(t *testing.T) {
	for _, c := range []struct{ power, scale, shift float64 }{
		{0.37, 0.83, -2.4}, {0.37, 0.83, 0}, {0, 0.83, -2.4}, {1, 0.83, -2.4}, {2, 0.34, -2.4},
		{2, 0, 1.5}, {0.5, 0, 4}, {0, 0, 0}, {3, -1.5, 0.2},
	} {
		x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
		r := runNeuron[float64](t, powerText(c.power, c.scale, c.shift), neuronShape, x, dy, false)
		// The parameters are float32 in caffe.proto.
		c.power, c.scale, c.shift = float64(float32(c.power)), float64(float32(c.scale)), float64(float32(c.shift))
		for i, v := range x {
			base := c.shift + c.scale*v
			want := math.Pow(base, c.power)
			grad := c.power * c.scale * math.Pow(base, c.power-1)
			if c.power == 0 || c.scale == 0 {
				grad = 0 // the input is ignored
			}
			if c.power == 0 || c.power == 1 || c.power == 2 {
				if math.IsNaN(r.y[i]) || math.IsNaN(r.dx[i]) {
					t.Fatalf("%v: NaN at %d for x = %v", c, i, v)
				}
			}
			if math.IsNaN(want) {
				if !math.IsNaN(r.y[i]) {
					t.Fatalf("%v: y[%d] = %v, want NaN", c, i, r.y[i])
				}
				continue
			}
			if math.Abs(r.y[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("%v: y[%d] = %v, want %v", c, i, r.y[i], want)
			}
			if g := dy[i] * grad; math.Abs(r.dx[i]-g) > 1e-12*math.Max(1, math.Abs(g)) {
				t.Fatalf("%v: dx[%d] = %v, want %v", c, i, r.dx[i], g)
			}
		}
	}
}

func TestPowerInPlace(t *testing.T) {
	checkNeuronInPlace(t, powerText(0.37, 0.83, 0.2), neuronPositive(120, 1))
	checkNeuronInPlace(t, powerText(2, 0.34, -2.4), neuronGaussian(120, 1))
	checkNeuronInPlace(t, powerText(1, 0.83, -2.4), neuronGaussian(120, 1))
	checkNeuronInPlace(t, powerText(0, 0.83, -2.4), neuronGaussian(120, 1))
}
