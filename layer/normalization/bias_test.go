package normalization_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

// bcastFill fills the bottoms as Caffe's Bias and Scale tests do, uniform
// in [1, 10]; a bottom given the shape {} (no axes) becomes a scalar.
func bcastFill(i int, b *blob.Blob[float64]) {
	if b.NumAxes() == 0 {
		if err := b.Reshape([]int{}); err != nil {
			panic(err)
		}
	}
	layertest.FillUniform(b, 1, 10, uint64(1701+i))
}

// bcastCases are Caffe's broadcast configurations for Bias and Scale: the
// layer's parameter block and the bottom shapes (one bottom: a learnable
// vector).
var bcastCases = []struct {
	name, param string
	bottom      [][]int
	mode        layertest.GradMode
}{
	{"eltwise", "axis: 0", [][]int{{2, 3, 4, 5}, {2, 3, 4, 5}}, layertest.Eltwise},
	{"eltwise/param", "axis: 0 num_axes: -1 filler { type: 'gaussian' }", [][]int{{2, 3, 4, 5}}, layertest.Exhaustive},
	{"begin", "axis: 0", [][]int{{2, 3, 4, 5}, {2, 3}}, layertest.Exhaustive},
	{"middle", "axis: 1", [][]int{{2, 3, 4, 5}, {3, 4}}, layertest.Exhaustive},
	{"middle/param", "axis: 1 num_axes: 2 filler { type: 'gaussian' }", [][]int{{2, 3, 4, 5}}, layertest.Exhaustive},
	{"end", "axis: 2", [][]int{{2, 3, 4, 5}, {4, 5}}, layertest.Exhaustive},
	{"end/negative-axis", "axis: -2", [][]int{{2, 3, 4, 5}, {4, 5}}, layertest.Exhaustive},
	{"scalar", "", [][]int{{2, 3, 4, 5}, {}}, layertest.Exhaustive},
	{"scalar/axis2", "axis: 2", [][]int{{2, 3, 4, 5}, {}}, layertest.Exhaustive},
	{"scalar/param", "num_axes: 0 filler { type: 'gaussian' }", [][]int{{2, 3, 4, 5}}, layertest.Exhaustive},
	{"channels/param", "filler { type: 'gaussian' }", [][]int{{2, 3, 4, 5}}, layertest.Exhaustive},
}

func init() {
	for _, c := range bcastCases {
		cases.AddGrad(layertest.GradCase{Name: "Bias/" + c.name, Layer: `type: "Bias" bias_param { ` + c.param + ` }`,
			Bottom: c.bottom, Fill: bcastFill, Mode: c.mode})
	}
	cases.AddParity(
		layertest.Parity{Layer: `type: "Bias" bias_param { filler { type: "gaussian" } }`, Bottom: [][]int{{4, 16, 9, 8}}},
		layertest.Parity{Layer: `type: "Bias" bias_param { axis: 1 num_axes: 2 filler { type: "gaussian" } }`, Bottom: [][]int{{3, 5, 17, 19}}},
		layertest.Parity{Layer: `type: "Bias" bias_param { axis: 1 }`, Bottom: [][]int{{4, 6, 11, 13}, {6, 11}}},
		layertest.Parity{Layer: `type: "Bias" bias_param { axis: 0 }`, Bottom: [][]int{{4, 6, 11, 13}, {4, 6, 11, 13}}},
		// A scalar: a learnable one (Parity cannot make a bottom of no axes).
		layertest.Parity{Layer: `type: "Bias" bias_param { num_axes: 0 filler { type: "gaussian" } }`, Bottom: [][]int{{4, 6, 11, 13}}},
	)
}

// bcastRef applies v to x the way Bias and Scale broadcast it: element
// (o, d, i) of x (outer x dim x inner) with v[d], through f.
func bcastRef(x, v []float64, inner int, f func(a, b float64) float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		y[i] = f(x[i], v[(i/inner)%len(v)])
	}
	return y
}

// bcastSum is the adjoint: the sum of dy over outer and inner for each of
// dim vector elements.
func bcastSum(dy []float64, dim, inner int) []float64 {
	s := make([]float64, dim)
	for i, g := range dy {
		s[(i/inner)%dim] += g
	}
	return s
}

func bcastAdd(a, b float64) float64 { return a + b }

// bcastLayer builds and sets up a Bias or Scale layer on the case's
// bottoms (filled as Caffe does) and returns it with its bottoms and top.
func bcastLayer(t *testing.T, typ, param string, shapes [][]int) (layer.Layer[float64], []*blob.Blob[float64], *blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, param)
	var bottom []*blob.Blob[float64]
	for i, s := range shapes {
		b := layertest.Blob[float64](t, s...)
		bcastFill(i, b)
		bottom = append(bottom, b)
	}
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{top})
	return l, bottom, top
}

// bcastInner is the inner count of a broadcast of a vector of shape v
// (len(v) axes) at axis over x.
func bcastInner(x []int, axis, vAxes int) int {
	if vAxes == 0 {
		return 1 // a scalar: any inner count gives the same result
	}
	n := 1
	for _, d := range x[axis+vAxes:] {
		n *= d
	}
	return n
}

func TestBiasForward(t *testing.T) {
	axes := map[string]int{"eltwise": 0, "eltwise/param": 0, "begin": 0, "middle": 1, "middle/param": 1, "end": 2,
		"end/negative-axis": 2, "scalar": 0, "scalar/axis2": 0, "scalar/param": 0, "channels/param": 1}
	for _, c := range bcastCases {
		t.Run(c.name, func(t *testing.T) {
			l, bottom, top := bcastLayer(t, "Bias", `type: "Bias" bias_param { `+c.param+` }`, c.bottom)
			layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
			v := l.LayerBase().Blobs()
			var vec *blob.Blob[float64]
			if len(bottom) == 2 {
				vec = bottom[1]
				if len(v) != 0 {
					t.Fatalf("%d learnable blobs with a bias bottom", len(v))
				}
			} else {
				vec = v[0]
			}
			want := bcastRef(bottom[0].CPUData(), vec.CPUData(), bcastInner(bottom[0].Shape(), axes[c.name], vec.NumAxes()), bcastAdd)
			layertest.CheckClose(t, "top", top.CPUData(), want, 1e-14)
		})
	}
}

// The learnable bias has the bottom's shape over num_axes from axis and
// the filler's values (constant 0 by default).
func TestBiasParamShape(t *testing.T) {
	for _, c := range []struct {
		param string
		want  []int
	}{
		{"", []int{3}},
		{"axis: 0 num_axes: 2", []int{2, 3}},
		{"axis: -1", []int{5}},
		{"axis: 1 num_axes: -1", []int{3, 4, 5}},
		{"num_axes: 0", []int{}},
		{"axis: 2 num_axes: 0", []int{}},
	} {
		l, _, _ := bcastLayer(t, "Bias", `type: "Bias" bias_param { `+c.param+` }`, [][]int{{2, 3, 4, 5}})
		b := l.LayerBase().Blobs()[0]
		if !slices.Equal(b.Shape(), c.want) {
			t.Errorf("%s: bias shape %v, want %v", c.param, b.Shape(), c.want)
		}
		for _, v := range b.CPUData() {
			if v != 0 {
				t.Errorf("%s: default filler gave %v, want 0", c.param, v)
				break
			}
		}
	}
}

// Backward against the definitions: dx = dy, d bias = sum of dy over outer
// and inner, accumulated into a learnable bias's diff, assigned to a
// bottom's.
func TestBiasBackward(t *testing.T) {
	for _, bottomBias := range []bool{false, true} {
		param := `type: "Bias" bias_param { axis: 1 num_axes: 2 filler { type: "gaussian" } }`
		shapes := [][]int{{2, 3, 4, 5}}
		if bottomBias {
			param = `type: "Bias" bias_param { axis: 1 }`
			shapes = append(shapes, []int{3, 4})
		}
		l, bottom, top := bcastLayer(t, "Bias", param, shapes)
		layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
		randomDiffN01(top, 5)
		vec := bottom[len(bottom)-1]
		if !bottomBias {
			vec = l.LayerBase().Blobs()[0]
		}
		for i := range vec.MutableCPUDiff() {
			vec.MutableCPUDiff()[i] = 7 // a parameter's diff accumulates; a bottom's is replaced
		}
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(len(bottom)), bottom)
		layertest.CheckClose(t, "dx", bottom[0].CPUDiff(), top.CPUDiff(), 0)
		want := bcastSum(top.CPUDiff(), 12, 5)
		if !bottomBias {
			for i := range want {
				want[i] += 7
			}
		}
		layertest.CheckClose(t, "bias diff", vec.CPUDiff(), want, 1e-12)
	}
}

// randomDiffN01 fills b's diff from N(0, 1) with the given seed (a top's
// diff, for a backward pass).
func randomDiffN01(b *blob.Blob[float64], seed uint64) {
	mathfn.RngGaussian(b.Count(), 0, 1, b.MutableCPUDiff(), mathfn.NewRNG(seed))
}

func TestBiasInPlace(t *testing.T) {
	param := `type: "Bias" bias_param { axis: 1 }`
	l, bottom, top := bcastLayer(t, "Bias", param, [][]int{{2, 3, 4, 5}, {3, 4}})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	want := append([]float64(nil), top.CPUData()...)
	randomDiffN01(top, 9)
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{true, true}, bottom)
	wantBias := append([]float64(nil), bottom[1].CPUDiff()...)
	dy := append([]float64(nil), top.CPUDiff()...)

	x := bottom[0]
	inPlace := []*blob.Blob[float64]{x, bottom[1]}
	layertest.SetUp(t, l, inPlace, []*blob.Blob[float64]{x})
	layertest.Forward(t, l, inPlace, []*blob.Blob[float64]{x})
	layertest.CheckClose(t, "in-place top", x.CPUData(), want, 0)
	copy(x.MutableCPUDiff(), dy)
	layertest.Backward(t, l, []*blob.Blob[float64]{x}, []bool{true, true}, inPlace)
	layertest.CheckClose(t, "in-place dx", x.CPUDiff(), dy, 0)
	layertest.CheckClose(t, "in-place bias diff", bottom[1].CPUDiff(), wantBias, 1e-12)
}

func TestBiasErrors(t *testing.T) {
	cases := []struct {
		param  string
		bottom [][]int
		want   string
	}{
		{`num_axes: -2`, [][]int{{2, 3, 4}}, "num_axes must be non-negative, or -1"},
		{`axis: 1 num_axes: 3`, [][]int{{2, 3, 4}}, "extends past bottom[0]'s shape"},
		{`axis: 3`, [][]int{{2, 3, 4}}, "axis"},
		{`axis: 1`, [][]int{{2, 3, 4}, {4}}, "dimension mismatch between bottom[0]->shape(1) = 3 and bias->shape(0) = 4"},
		{`axis: 2`, [][]int{{2, 3, 4}, {4, 1}}, "extends past bottom[0]'s shape"},
		{`filler { type: "gaussian" std: 0 }`, [][]int{{2, 3}}, "bias filler"},
		{``, [][]int{{2, 3}, nil}, "bias blob has no shape"},
	}
	for _, c := range cases {
		var bottom []*blob.Blob[float32]
		for _, s := range c.bottom {
			bottom = append(bottom, layertest.Blob[float32](t, s...))
		}
		l := layertest.New[float32](t, `name: "bias3" type: "Bias" bias_param { `+c.param+` }`)
		err := layer.SetUp(l, bottom, []*blob.Blob[float32]{layertest.Blob[float32](t)})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"bias3" (Bias)`) {
			t.Errorf("%s on %v: err = %v, want one naming bias3 and containing %q", c.param, c.bottom, err, c.want)
		}
	}
}
