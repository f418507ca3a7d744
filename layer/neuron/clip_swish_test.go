package neuron_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Clip", Layer: `type: "Clip" clip_param { min: -1 max: 1 }`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Eltwise, Kink: 1, KinkRange: 0.02},
		layertest.GradCase{Name: "Swish", Layer: `type: "Swish"`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Eltwise},
		layertest.GradCase{Name: "Swish/beta", Layer: `type: "Swish" swish_param { beta: 1.5 }`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Eltwise},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Clip" clip_param { min: -0.5 max: 0.7 }`, Bottom: [][]int{{2, 3, 40, 50}}},
		layertest.Parity{Layer: `type: "Swish" swish_param { beta: 0.8 }`, Bottom: [][]int{{2, 3, 40, 50}}},
	)
}

func TestClipForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Clip" clip_param { min: -1 max: 2 }`)
	x := layertest.Blob[float64](t, 2, 3, 4, 5)
	layertest.FillGaussian(x, 0, 2, 1)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for i, v := range x.CPUData() {
		if want := math.Max(-1, math.Min(2, v)); y.CPUData()[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y.CPUData()[i], want)
		}
	}
	if _, err := layer.New[float32](layertest.Param(t, `type: "Clip" clip_param { min: 1 max: 0 }`)); err == nil {
		t.Error("Clip with min > max was accepted")
	}
}

func TestSwishForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Swish" swish_param { beta: 2 }`)
	x := layertest.Blob[float64](t, 2, 3, 4, 5)
	layertest.FillGaussian(x, 0, 1, 1)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for i, v := range x.CPUData() {
		if want := v / (1 + math.Exp(-2*v)); math.Abs(y.CPUData()[i]-want) > 1e-14 {
			t.Fatalf("y[%d] = %v, want %v", i, y.CPUData()[i], want)
		}
	}
}
