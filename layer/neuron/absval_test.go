package neuron_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(layertest.GradCase{Name: "AbsVal", Layer: `type: "AbsVal" bottom: "x" top: "y"`,
		Bottom: [][]int{neuronShape}, Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01})
	cases.AddParity(layertest.Parity{Layer: `type: "AbsVal" bottom: "x" top: "y"`, Bottom: [][]int{{2, 3, 40, 50}}})
}

func TestAbsValForward(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	x[7] = 0
	r := runNeuron[float64](t, `type: "AbsVal"`, neuronShape, x, dy, false)
	for i, v := range x {
		if r.y[i] != math.Abs(v) {
			t.Fatalf("y[%d] = %v, want %v", i, r.y[i], math.Abs(v))
		}
		want := 0.0
		if v > 0 {
			want = dy[i]
		} else if v < 0 {
			want = -dy[i]
		}
		if r.dx[i] != want {
			t.Fatalf("dx[%d] = %v, want %v", i, r.dx[i], want)
		}
	}
}

// TestAbsValNotInPlace: like Caffe, AbsVal refuses to run in place.
func TestAbsValNotInPlace(t *testing.T) {
	l := layertest.New[float32](t, `name: "abs1" type: "AbsVal"`)
	x := layertest.Blob[float32](t, 4)
	err := layer.SetUp(l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{x})
	if err == nil || !strings.Contains(err.Error(), "in-place") || !strings.Contains(err.Error(), "abs1") {
		t.Errorf("err = %v, want an in-place error naming abs1", err)
	}
}
