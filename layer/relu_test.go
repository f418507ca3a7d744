package layer_test

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	addGradCases(
		gradCase{name: "ReLU", layer: `type: "ReLU" bottom: "x" top: "y"`, bottom: [][]int{{2, 3, 4, 5}},
			mode: eltwise, kink: 0, kinkRange: 0.01},
		gradCase{name: "ReLU/leaky", layer: `type: "ReLU" bottom: "x" top: "y" relu_param { negative_slope: 0.01 }`,
			bottom: [][]int{{2, 3, 4, 5}}, mode: eltwise, kink: 0, kinkRange: 0.01},
	)
	addParityCases(layertest.Parity{Layer: `type: "ReLU" bottom: "x" top: "y" relu_param { negative_slope: 0.1 }`, Bottom: [][]int{{2, 3, 40, 50}}})
}

func TestReLUForward(t *testing.T) {
	for _, slope := range []float64{0, 0.25} {
		l := layertest.New[float64](t, `type: "ReLU" relu_param { negative_slope: `+strings.TrimSpace(ftoa(slope))+` }`)
		x := layertest.Blob[float64](t, 2, 3, 4, 5)
		layertest.FillGaussian(x, 0, 1, 1)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blobF64{x}, []*blobF64{y})
		layertest.Forward(t, l, []*blobF64{x}, []*blobF64{y})
		for i, v := range x.CPUData() {
			want := v
			if v <= 0 {
				want = slope * v
			}
			if y.CPUData()[i] != want {
				t.Fatalf("slope %v: y[%d] = %v, want %v", slope, i, y.CPUData()[i], want)
			}
		}
	}
}

func TestReLUInPlace(t *testing.T) {
	l := layertest.New[float32](t, `type: "ReLU"`)
	x := layertest.Blob[float32](t, 10)
	copy(x.MutableCPUData(), []float32{-2, -1, 0, 1, 2, -3, 3, -0.5, 0.5, 4})
	layertest.SetUp(t, l, []*blobF32{x}, []*blobF32{x})
	layertest.Forward(t, l, []*blobF32{x}, []*blobF32{x})
	want := []float32{0, 0, 0, 1, 2, 0, 3, 0, 0.5, 4}
	layertest.CheckClose(t, "in-place ReLU", x.CPUData(), want, 0)
}

func TestBlobCountErrorsNameTheLayer(t *testing.T) {
	l := layertest.New[float32](t, `name: "relu7" type: "ReLU"`)
	a, b := layertest.Blob[float32](t, 3), layertest.Blob[float32](t, 3)
	err := layer.SetUp(l, []*blobF32{a, b}, []*blobF32{layertest.Blob[float32](t)})
	if err == nil || !strings.Contains(err.Error(), `layer "relu7" (ReLU)`) || !strings.Contains(err.Error(), "takes 1 bottom blob(s), got 2") {
		t.Errorf("err = %v", err)
	}
}
