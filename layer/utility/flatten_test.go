package utility_test

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Flatten", Layer: `type: "Flatten" bottom: "a" top: "b"`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Flatten/axes", Layer: `type: "Flatten" bottom: "a" top: "b" flatten_param { axis: 0 end_axis: -2 }`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Flatten/exhaustive", Layer: `type: "Flatten" bottom: "a" top: "b" flatten_param { axis: 2 }`,
			Bottom: [][]int{{2, 2, 3, 2}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Flatten" bottom: "a" top: "b"`, Bottom: [][]int{{4, 5, 20, 17}}},
		layertest.Parity{Layer: `type: "Flatten" bottom: "a" top: "b" flatten_param { axis: 1 end_axis: 2 }`, Bottom: [][]int{{4, 5, 20, 17}}},
	)
}

// TestFlattenSetUp follows Caffe's test_flatten_layer setup cases.
func TestFlattenSetUp(t *testing.T) {
	cases := []struct {
		param string
		want  []int
	}{
		{``, []int{2, 90}},
		{`flatten_param { axis: 2 }`, []int{2, 3, 30}},
		{`flatten_param { end_axis: -2 }`, []int{2, 18, 5}},
		{`flatten_param { axis: 0 end_axis: -2 }`, []int{36, 5}},
		{`flatten_param { axis: 3 }`, []int{2, 3, 6, 5}},
		{`flatten_param { axis: 0 }`, []int{180}},
		{`flatten_param { axis: -3 end_axis: 2 }`, []int{2, 18, 5}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Flatten" `+c.param)
		top := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{layertest.GaussBlob(t, 1, 2, 3, 6, 5)}, []*blob.Blob[float64]{top})
		layertest.CheckShape(t, c.param, top, c.want...)
	}
}

func TestFlattenForwardBackward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Flatten"`)
	bottom := layertest.GaussBlob(t, 1, 2, 3, 6, 5)
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top})
	for c := range 90 {
		for n := range 2 {
			if top.CPUData()[n*90+c] != bottom.CPUData()[bottom.Offset(n, c/30, (c/5)%6, c%5)] {
				t.Fatalf("top (%d, %d) differs from the bottom's element", n, c)
			}
		}
	}
	for j := range top.Count() {
		top.MutableCPUDiff()[j] = float64(j)
	}
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{true}, []*blob.Blob[float64]{bottom})
	for j, v := range bottom.CPUDiff() {
		if v != float64(j) {
			t.Fatalf("bottom diff[%d] = %v, want %d", j, v, j)
		}
	}
	if !layertest.SharesMemory(bottom, top, true) {
		t.Error("the top should share the bottom's data and diff")
	}
}

func TestFlattenErrors(t *testing.T) {
	in := [][]int{{2, 3, 6, 5}}
	layertest.ExpectSetUpError(t, `type: "Flatten" flatten_param { axis: 2 end_axis: 1 }`, in, 1, "end_axis 1", "comes before axis 2")
	layertest.ExpectSetUpError(t, `type: "Flatten" flatten_param { axis: 4 }`, in, 1, "flatten_param.axis", "axis 4 out of range")
	layertest.ExpectSetUpError(t, `type: "Flatten" flatten_param { end_axis: -5 }`, in, 1, "flatten_param.end_axis")
	l := layertest.New[float64](t, `name: "bad" type: "Flatten"`)
	b := layertest.GaussBlob(t, 1, 2, 3)
	if err := layer.SetUp(l, []*blob.Blob[float64]{b}, []*blob.Blob[float64]{b}); err == nil || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "in-place") {
		t.Errorf("in-place flatten: err = %v", err)
	}
}
