package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// Sigmoid and TanH over a blob large enough to be spread over the cores
// (uneven parts): every element of both passes as the formulas give it.
func TestSigmoidTanHAcrossCores(t *testing.T) {
	for _, c := range []struct {
		typ      string
		forward  func(x float32) float32
		backward func(y, dy float32) float32
	}{
		{"Sigmoid", func(x float32) float32 { return float32(0.5*math.Tanh(0.5*float64(x)) + 0.5) },
			func(y, dy float32) float32 { return dy * y * (1 - y) }},
		{"TanH", func(x float32) float32 { return float32(math.Tanh(float64(x))) },
			func(y, dy float32) float32 { return dy * (1 - y*y) }},
	} {
		l := layertest.New[float32](t, `type: "`+c.typ+`"`)
		x := layertest.Blob[float32](t, 3, 7, 41, 53)
		layertest.FillGaussian(x, 0, 2, 3)
		y := layertest.Blob[float32](t)
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		for i, v := range x.CPUData() {
			if got, want := y.CPUData()[i], c.forward(v); got != want {
				t.Fatalf("%s: y[%d] = %v, want %v", c.typ, i, got, want)
			}
		}
		dy := y.MutableCPUDiff()
		for i := range dy {
			dy[i] = float32(i%7) - 3
		}
		layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
		for i, v := range y.CPUData() {
			if got, want := x.CPUDiff()[i], c.backward(v, dy[i]); got != want {
				t.Fatalf("%s: dx[%d] = %v, want %v", c.typ, i, got, want)
			}
		}
	}
}
