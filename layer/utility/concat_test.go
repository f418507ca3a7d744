package utility_test

import (
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	two := `type: "Concat" bottom: "a" bottom: "b" top: "c" `
	three := `type: "Concat" bottom: "a" bottom: "b" bottom: "d" top: "c" `
	// Caffe's test_concat_layer checks the summed objective with threshold
	// 1e-2; the small cases also run exhaustively.
	cases.AddGrad(
		layertest.GradCase{Name: "Concat/trivial", Layer: `type: "Concat" bottom: "a" top: "c"`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Summed, Threshold: 1e-2},
		layertest.GradCase{Name: "Concat/num", Layer: two + `concat_param { axis: 0 }`,
			Bottom: [][]int{{2, 3, 6, 5}, {5, 3, 6, 5}}, Mode: layertest.Summed, Threshold: 1e-2},
		layertest.GradCase{Name: "Concat/channels", Layer: two,
			Bottom: [][]int{{2, 3, 6, 5}, {2, 5, 6, 5}}, Mode: layertest.Summed, Threshold: 1e-2},
		layertest.GradCase{Name: "Concat/three/exhaustive", Layer: three,
			Bottom: [][]int{{2, 1, 3, 2}, {2, 3, 3, 2}, {2, 2, 3, 2}}},
		layertest.GradCase{Name: "Concat/num/exhaustive", Layer: two + `concat_param { concat_dim: 0 }`,
			Bottom: [][]int{{1, 3, 2, 2}, {2, 3, 2, 2}}},
		layertest.GradCase{Name: "Concat/last-axis/exhaustive", Layer: two + `concat_param { axis: -1 }`,
			Bottom: [][]int{{2, 3, 2}, {2, 3, 4}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: three, Bottom: [][]int{{4, 5, 20, 17}, {4, 3, 20, 17}, {4, 7, 20, 17}}},
		layertest.Parity{Layer: two + `concat_param { axis: 0 }`, Bottom: [][]int{{3, 5, 21, 17}, {4, 5, 21, 17}}},
		layertest.Parity{Layer: two + `concat_param { axis: -1 }`, Bottom: [][]int{{6, 40, 13}, {6, 40, 29}}},
		layertest.Parity{Layer: `type: "Concat" bottom: "a" top: "c"`, Bottom: [][]int{{3, 5, 21, 17}}},
	)
}

func TestConcatSetUp(t *testing.T) {
	cases := []struct {
		param  string
		bottom [][]int
		want   []int
	}{
		{`concat_param { axis: 0 }`, [][]int{{2, 3, 6, 5}, {5, 3, 6, 5}}, []int{7, 3, 6, 5}},
		{``, [][]int{{2, 3, 6, 5}, {2, 5, 6, 5}}, []int{2, 8, 6, 5}},
		{`concat_param { axis: -3 }`, [][]int{{2, 3, 6, 5}, {2, 5, 6, 5}}, []int{2, 8, 6, 5}},
		{`concat_param { concat_dim: 0 }`, [][]int{{2, 3, 6, 5}, {5, 3, 6, 5}}, []int{7, 3, 6, 5}},
		{`concat_param { axis: 3 }`, [][]int{{2, 3, 6, 5}, {2, 3, 6, 1}, {2, 3, 6, 2}}, []int{2, 3, 6, 8}},
		{``, [][]int{{2, 3, 6, 5}}, []int{2, 3, 6, 5}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Concat" `+c.param)
		top := layertest.Blob[float64](t)
		layertest.SetUp(t, l, layertest.GaussBlobs(t, c.bottom...), []*blob.Blob[float64]{top})
		layertest.CheckShape(t, c.param, top, c.want...)
	}
}

func TestConcatForwardBackward(t *testing.T) {
	cases := []struct {
		param  string
		bottom [][]int
		axis   int
	}{
		{`concat_param { axis: 0 }`, [][]int{{2, 3, 6, 5}, {5, 3, 6, 5}}, 0},
		{``, [][]int{{2, 3, 6, 5}, {2, 5, 6, 5}, {2, 1, 6, 5}}, 1},
		{`concat_param { axis: -1 }`, [][]int{{2, 3, 6, 5}, {2, 3, 6, 2}}, 3},
		{`concat_param { concat_dim: 2 }`, [][]int{{2, 3, 1, 5}, {2, 3, 4, 5}}, 2},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Concat" `+c.param)
		bottom := layertest.GaussBlobs(t, c.bottom...)
		top := layertest.Blob[float64](t)
		layertest.SetUpForward(t, l, bottom, []*blob.Blob[float64]{top})
		var parts [][]float64
		var widths []int
		for _, b := range bottom {
			parts = append(parts, b.CPUData())
			widths = append(widths, b.Shape()[c.axis])
		}
		outer, inner := bottom[0].CountRange(0, c.axis), bottom[0].CountFrom(c.axis+1)
		layertest.CheckClose(t, "concat "+c.param, top.CPUData(), layertest.AxisJoin(parts, widths, outer, inner), 0)

		// Backward splits the diff back: with the top's diff equal to its
		// data, each bottom gets its own data as diff.
		copy(top.MutableCPUDiff(), top.CPUData())
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(len(bottom)), bottom)
		for i, b := range bottom {
			layertest.CheckClose(t, "concat backward bottom "+strconv.Itoa(i), b.CPUDiff(), b.CPUData(), 0)
		}
	}
}

func TestConcatBackwardSkipsBottoms(t *testing.T) {
	l := layertest.New[float64](t, `type: "Concat"`)
	bottom := layertest.GaussBlobs(t, []int{2, 3, 2}, []int{2, 2, 2})
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, bottom, []*blob.Blob[float64]{top})
	for j := range bottom[0].Count() {
		bottom[0].MutableCPUDiff()[j] = 7
	}
	copy(top.MutableCPUDiff(), top.CPUData())
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{false, true}, bottom)
	for _, v := range bottom[0].CPUDiff() {
		if v != 7 {
			t.Fatalf("bottom 0 diff changed to %v without propagate_down", v)
		}
	}
	layertest.CheckClose(t, "bottom 1 diff", bottom[1].CPUDiff(), bottom[1].CPUData(), 0)
}

func TestConcatSingleBottomShares(t *testing.T) {
	l := layertest.New[float64](t, `type: "Concat"`)
	bottom := layertest.GaussBlob(t, 1, 2, 3, 4)
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "trivial concat", top.CPUData(), bottom.CPUData(), 0)
	if !layertest.SharesMemory(bottom, top, true) {
		t.Error("with one bottom the top should share the bottom's data and diff")
	}
}

func TestConcatErrors(t *testing.T) {
	c := `type: "Concat" `
	layertest.ExpectSetUpError(t, c, [][]int{{2, 3, 6, 5}, {2, 3, 5, 5}}, 1, "same shape except along the concat axis 1", "2 3 6 5", "2 3 5 5")
	layertest.ExpectSetUpError(t, c+`concat_param { axis: 0 }`, [][]int{{2, 3, 6, 5}, {2, 4, 6, 5}}, 1, "concat axis 0", "2 4 6 5")
	layertest.ExpectSetUpError(t, c, [][]int{{2, 3, 6, 5}, {2, 3, 6}}, 1, "same number of axes", "2 3 6 5", "2 3 6")
	layertest.ExpectSetUpError(t, c+`concat_param { axis: 1 concat_dim: 1 }`, [][]int{{2, 3}, {2, 3}}, 1, "not both")
	layertest.ExpectSetUpError(t, c+`concat_param { concat_dim: 4 }`, [][]int{{2, 3, 6, 5}, {2, 3, 6, 5}}, 1, "concat_dim 4 out of range")
	layertest.ExpectSetUpError(t, c+`concat_param { axis: -5 }`, [][]int{{2, 3, 6, 5}, {2, 3, 6, 5}}, 1, "axis -5 out of range")
	layertest.ExpectSetUpError(t, c, nil, 1, "takes at least 1 bottom")
}
