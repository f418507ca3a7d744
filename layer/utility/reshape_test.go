package utility_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Reshape", Layer: `type: "Reshape" bottom: "a" top: "b" reshape_param { shape { dim: 6 dim: 2 dim: 3 dim: 5 } }`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Reshape/infer", Layer: `type: "Reshape" bottom: "a" top: "b" reshape_param { shape { dim: 0 dim: -1 } }`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Reshape/exhaustive", Layer: `type: "Reshape" bottom: "a" top: "b" reshape_param { axis: 1 num_axes: 2 shape { dim: -1 } }`,
			Bottom: [][]int{{2, 3, 2, 2}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Reshape" bottom: "a" top: "b" reshape_param { shape { dim: 0 dim: -1 dim: 17 } }`, Bottom: [][]int{{4, 5, 20, 17}}},
		layertest.Parity{Layer: `type: "Reshape" bottom: "a" top: "b" reshape_param { axis: 2 num_axes: 0 shape { dim: 1 dim: 1 } }`, Bottom: [][]int{{4, 5, 20, 17}}},
	)
}

// TestReshapeSetUp follows Caffe's test_reshape_layer shape cases on a
// 2 x 3 x 6 x 5 input.
func TestReshapeSetUp(t *testing.T) {
	cases := []struct {
		param string
		want  []int
	}{
		{`shape { dim: 0 dim: -1 dim: 1 dim: 1 }`, []int{2, 90, 1, 1}},
		{`shape { dim: 0 dim: 0 dim: 0 dim: 0 }`, []int{2, 3, 6, 5}},
		{`shape { dim: 0 dim: 3 dim: 10 dim: -1 }`, []int{2, 3, 10, 3}},
		{`axis: 1 shape { dim: 3 dim: 10 dim: -1 }`, []int{2, 3, 10, 3}},
		{`axis: 0 num_axes: 0 shape { dim: 1 dim: 1 dim: 1 }`, []int{1, 1, 1, 2, 3, 6, 5}},
		{`axis: 2 num_axes: 0 shape { dim: 1 dim: 1 dim: 1 }`, []int{2, 3, 1, 1, 1, 6, 5}},
		{`axis: -1 num_axes: 0 shape { dim: 1 dim: 1 dim: 1 }`, []int{2, 3, 6, 5, 1, 1, 1}},
		{`axis: 1 num_axes: 2 shape { dim: -1 }`, []int{2, 18, 5}},
		{`axis: 1 num_axes: 3 shape { dim: -1 }`, []int{2, 90}},
		{`axis: -3 shape { dim: -1 }`, []int{2, 3, 30}},
		{`axis: -2 shape { dim: -1 }`, []int{2, 3, 6, 5}},
		{`axis: 1 num_axes: 2 shape { dim: 18 }`, []int{2, 18, 5}},
		{`shape { dim: 6 dim: 2 dim: 3 dim: 5 }`, []int{6, 2, 3, 5}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Reshape" reshape_param { `+c.param+` }`)
		top := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{layertest.GaussBlob(t, 1, 2, 3, 6, 5)}, []*blob.Blob[float64]{top})
		layertest.CheckShape(t, c.param, top, c.want...)
	}
}

// TestReshapeForward checks Caffe's TestForward and TestForwardAfterReshape:
// the data is unchanged, and a new input shape is followed.
func TestReshapeForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Reshape" reshape_param { shape { dim: 6 dim: -1 } }`)
	bottom := layertest.GaussBlob(t, 1, 2, 3, 6, 5)
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top})
	layertest.CheckShape(t, "reshape", top, 6, 30)
	layertest.CheckClose(t, "reshape", top.CPUData(), bottom.CPUData(), 0)
	if err := bottom.Reshape([]int{2, 3, 6, 7}); err != nil {
		t.Fatal(err)
	}
	layertest.FillGaussian(bottom, 0, 1, 2)
	layertest.Forward(t, l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top})
	layertest.CheckShape(t, "reshape after the input changed", top, 6, 42)
	layertest.CheckClose(t, "reshape after the input changed", top.CPUData(), bottom.CPUData(), 0)
	if !layertest.SharesMemory(bottom, top, true) {
		t.Error("the top should share the bottom's data and diff")
	}
}

func TestReshapeErrors(t *testing.T) {
	in := [][]int{{2, 3, 6, 5}}
	r := `type: "Reshape" reshape_param { `
	layertest.ExpectSetUpError(t, r+`shape { dim: -1 dim: 3 dim: -1 } }`, in, 1, "multiple -1 dims")
	layertest.ExpectSetUpError(t, r+`shape { dim: 2 dim: -2 } }`, in, 1, "dimension -2")
	layertest.ExpectSetUpError(t, r+`axis: 2 shape { dim: 0 dim: 0 dim: 0 } }`, in, 1, "contains a 0", "no corresponding axis 4")
	layertest.ExpectSetUpError(t, r+`shape { dim: 7 dim: -1 } }`, in, 1, "bottom count (180) must be divisible", "(7)")
	layertest.ExpectSetUpError(t, r+`shape { dim: 2 dim: 3 dim: 6 dim: 6 } }`, in, 1, "output count must match input count", "216", "180")
	layertest.ExpectSetUpError(t, r+`axis: 5 shape { dim: -1 } }`, in, 1, "axis 5 out of range")
	layertest.ExpectSetUpError(t, r+`axis: -6 shape { dim: -1 } }`, in, 1, "axis -6 out of range")
	layertest.ExpectSetUpError(t, r+`num_axes: -2 shape { dim: -1 } }`, in, 1, "num_axes must be >= 0")
	layertest.ExpectSetUpError(t, r+`axis: 2 num_axes: 3 shape { dim: -1 } }`, in, 1, "end axis = axis + num_axes = 5 is out of range")
}
