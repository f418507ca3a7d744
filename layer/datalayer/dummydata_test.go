package datalayer_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

func init() {
	cases.AddParity(
		layertest.Parity{Layer: `type: "DummyData" top: "a" top: "b" dummy_data_param { shape { dim: 4 dim: 5 dim: 20 dim: 17 } shape { dim: 3 dim: 1000 }
			data_filler { type: "constant" value: 7 } data_filler { type: "constant" value: -2.5 } }`},
		layertest.Parity{Layer: `type: "DummyData" top: "a" dummy_data_param { num: 5 channels: 3 height: 20 width: 17 }`},
	)
}

func TestDummyDataShapes(t *testing.T) {
	cases := []struct {
		param string
		nTop  int
		want  [][]int
	}{
		// Caffe's TestOneTopConstant and TestTwoTopConstant (legacy dims).
		{`num: 5 channels: 3 height: 2 width: 4`, 1, [][]int{{5, 3, 2, 4}}},
		{`num: 5 channels: 3 height: 2 width: 4 width: 1`, 2, [][]int{{5, 3, 2, 4}, {5, 3, 2, 1}}},
		{`num: 5 num: 3 channels: 3 height: 2 width: 4`, 2, [][]int{{5, 3, 2, 4}, {3, 3, 2, 4}}},
		{`shape { dim: 2 dim: 3 }`, 2, [][]int{{2, 3}, {2, 3}}},
		{`shape { dim: 2 dim: 3 } shape { dim: 4 dim: 1 dim: 2 }`, 2, [][]int{{2, 3}, {4, 1, 2}}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "DummyData" dummy_data_param { `+c.param+` }`)
		top := layertest.Blobs[float64](t, c.nTop)
		layertest.SetUpForward(t, l, nil, top)
		for i, tb := range top {
			layertest.CheckShape(t, c.param+" top "+strconv.Itoa(i), tb, c.want[i]...)
			for _, v := range tb.CPUData() {
				if v != 0 {
					t.Fatalf("%s: top %d holds %v, want the default constant 0", c.param, i, v)
				}
			}
		}
	}
}

// TestDummyDataRefill follows Caffe's TestThreeTopConstantGaussianConstant:
// constant tops are filled once, at setup, and keep what later layers write
// into them; the gaussian top is refilled on every forward pass.
func TestDummyDataRefill(t *testing.T) {
	l := layertest.New[float64](t, `type: "DummyData" dummy_data_param { num: 5 channels: 3 height: 2 width: 4
		data_filler { type: "constant" value: 7 } data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 9 } }`)
	l.LayerBase().SetRNG(mathfn.NewRNG(5))
	top := layertest.Blobs[float64](t, 3)
	layertest.SetUpForward(t, l, nil, top)
	for i, want := range []float64{7, 0, 9} {
		if i == 1 {
			continue
		}
		for _, v := range top[i].CPUData() {
			if v != want {
				t.Fatalf("top %d holds %v, want %v", i, v, want)
			}
		}
	}
	first := slices.Clone(top[1].CPUData())
	distinct := map[float64]bool{}
	for _, v := range first {
		distinct[v] = true
	}
	if len(distinct) < len(first)/2 {
		t.Errorf("gaussian top has only %d distinct values out of %d", len(distinct), len(first))
	}
	top[0].MutableCPUData()[0] = -1 // a constant top is not refilled
	layertest.Forward(t, l, nil, top)
	if slices.Equal(first, top[1].CPUData()) {
		t.Error("the gaussian top did not change between forward passes")
	}
	if top[0].CPUData()[0] != -1 || top[0].CPUData()[1] != 7 || top[2].CPUData()[0] != 9 {
		t.Errorf("constant tops were refilled: %v, %v, %v", top[0].CPUData()[0], top[0].CPUData()[1], top[2].CPUData()[0])
	}
}

// TestDummyDataOneFillerForAll checks that a single non-constant filler
// refills every top.
func TestDummyDataOneFillerForAll(t *testing.T) {
	l := layertest.New[float64](t, `type: "DummyData" dummy_data_param { shape { dim: 10 } data_filler { type: "uniform" min: 2 max: 3 } }`)
	top := layertest.Blobs[float64](t, 2)
	layertest.SetUpForward(t, l, nil, top)
	before := [][]float64{slices.Clone(top[0].CPUData()), slices.Clone(top[1].CPUData())}
	layertest.Forward(t, l, nil, top)
	for i, tb := range top {
		if slices.Equal(before[i], tb.CPUData()) {
			t.Errorf("top %d was not refilled", i)
		}
		for _, v := range tb.CPUData() {
			if v < 2 || v > 3 {
				t.Fatalf("top %d holds %v, outside [2, 3]", i, v)
			}
		}
	}
}

func TestDummyDataErrors(t *testing.T) {
	d := `type: "DummyData" dummy_data_param { `
	layertest.ExpectSetUpError(t, d+`shape { dim: 2 } data_filler { } data_filler { } }`, nil, 3, "number of data fillers must be 0, 1 or equal to the number of tops: 3", "2 data fillers")
	layertest.ExpectSetUpError(t, d+`shape { dim: 2 } shape { dim: 3 } }`, nil, 3, "shape must be specified once, or once per top blob (3); specified 2")
	layertest.ExpectSetUpError(t, d+`}`, nil, 1, "shape must be specified once")
	layertest.ExpectSetUpError(t, d+`num: 2 channels: 3 height: 4 width: 5 shape { dim: 2 } }`, nil, 1, "both shape and the legacy")
	layertest.ExpectSetUpError(t, d+`num: 2 channels: 3 height: 4 }`, nil, 1, "width must be specified once")
	layertest.ExpectSetUpError(t, d+`num: 2 num: 3 channels: 3 height: 4 width: 5 }`, nil, 3, "num must be specified once, or once per top blob (3); specified 2")
	layertest.ExpectSetUpError(t, d+`shape { dim: 2 } data_filler { type: "nope" } }`, nil, 1, "unknown filler type")
	layertest.ExpectSetUpError(t, d+`shape { dim: 2 } }`, [][]int{{2}}, 1, "takes 0 bottom")
}
