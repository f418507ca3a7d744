package normalization_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	for _, c := range bcastCases {
		cases.AddGrad(layertest.GradCase{Name: "Scale/" + c.name, Layer: `type: "Scale" scale_param { ` + c.param + ` }`,
			Bottom: c.bottom, Fill: bcastFill, Mode: c.mode})
	}
	cases.AddGrad(
		layertest.GradCase{Name: "Scale/scalar/bias", Bottom: [][]int{{2, 3, 4, 5}, {}}, Fill: bcastFill,
			Layer: `type: "Scale" scale_param { bias_term: true bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Scale/middle/param/bias", Bottom: [][]int{{2, 3, 4, 5}}, Fill: bcastFill,
			Layer: `type: "Scale" scale_param { axis: 1 num_axes: 2 filler { type: "gaussian" } bias_term: true bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Scale/middle/bias", Bottom: [][]int{{2, 3, 4, 5}, {3, 4}}, Fill: bcastFill,
			Layer: `type: "Scale" scale_param { axis: 1 bias_term: true bias_filler { type: "gaussian" } }`},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Scale" scale_param { filler { type: "gaussian" } }`, Bottom: [][]int{{4, 16, 9, 8}}},
		layertest.Parity{Layer: `type: "Scale" scale_param { axis: 1 num_axes: 2 filler { type: "gaussian" } bias_term: true bias_filler { type: "gaussian" } }`,
			Bottom: [][]int{{3, 5, 17, 19}}},
		layertest.Parity{Layer: `type: "Scale" scale_param { axis: 1 bias_term: true bias_filler { type: "gaussian" } }`, Bottom: [][]int{{4, 6, 11, 13}, {6, 11}}},
		layertest.Parity{Layer: `type: "Scale" scale_param { axis: 0 }`, Bottom: [][]int{{4, 6, 11, 13}, {4, 6, 11, 13}}},
		layertest.Parity{Layer: `type: "Scale" scale_param { axis: 0 num_axes: -1 filler { type: "gaussian" } }`, Bottom: [][]int{{4, 6, 11, 13}}},
		layertest.Parity{Layer: `type: "Scale" scale_param { axis: 2 }`, Bottom: [][]int{{4, 6, 11, 13}, {11, 13}}},
		// A scalar: a learnable one (Parity cannot make a bottom of no axes).
		layertest.Parity{Layer: `type: "Scale" scale_param { num_axes: 0 filler { type: "gaussian" } }`, Bottom: [][]int{{4, 6, 11, 13}}},
	)
}

func bcastMul(a, b float64) float64 { return a * b }

func TestScaleForward(t *testing.T) {
	axes := map[string]int{"eltwise": 0, "eltwise/param": 0, "begin": 0, "middle": 1, "middle/param": 1, "end": 2,
		"end/negative-axis": 2, "scalar": 0, "scalar/axis2": 0, "scalar/param": 0, "channels/param": 1}
	for _, c := range bcastCases {
		t.Run(c.name, func(t *testing.T) {
			l, bottom, top := bcastLayer(t, "Scale", `type: "Scale" scale_param { `+c.param+` }`, c.bottom)
			layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
			vec := bottom[len(bottom)-1]
			if len(bottom) == 1 {
				vec = l.LayerBase().Blobs()[0]
			}
			want := bcastRef(bottom[0].CPUData(), vec.CPUData(), bcastInner(bottom[0].Shape(), axes[c.name], vec.NumAxes()), bcastMul)
			layertest.CheckClose(t, "top", top.CPUData(), want, 1e-14)
		})
	}
}

// Caffe's TestForwardBroadcastMiddleWithParamAndBias: top = x * s + b.
func TestScaleForwardWithBias(t *testing.T) {
	l, bottom, top := bcastLayer(t, "Scale", `type: "Scale" scale_param { axis: 1 num_axes: 2 filler { type: "gaussian" }
		bias_term: true bias_filler { type: "gaussian" } }`, [][]int{{2, 3, 4, 5}})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	blobs := l.LayerBase().Blobs()
	if len(blobs) != 2 || !slices.Equal(blobs[0].Shape(), []int{3, 4}) || !slices.Equal(blobs[1].Shape(), []int{3, 4}) {
		t.Fatalf("learnable blobs: %d, want scale and bias of shape [3 4]", len(blobs))
	}
	want := bcastRef(bcastRef(bottom[0].CPUData(), blobs[0].CPUData(), 5, bcastMul), blobs[1].CPUData(), 5, bcastAdd)
	layertest.CheckClose(t, "top", top.CPUData(), want, 1e-14)
}

// The default filler is constant 1 (identity), the bias's constant 0; with
// a scale bottom the bias has the bottom's shape.
func TestScaleDefaults(t *testing.T) {
	l, _, _ := bcastLayer(t, "Scale", `type: "Scale" scale_param { bias_term: true }`, [][]int{{2, 3, 4}})
	blobs := l.LayerBase().Blobs()
	layertest.CheckClose(t, "default scale", blobs[0].CPUData(), []float64{1, 1, 1}, 0)
	layertest.CheckClose(t, "default bias", blobs[1].CPUData(), []float64{0, 0, 0}, 0)
	l, _, _ = bcastLayer(t, "Scale", `type: "Scale" scale_param { filler { value: 2.5 } }`, [][]int{{2, 3, 4}})
	layertest.CheckClose(t, "constant scale", l.LayerBase().Blobs()[0].CPUData(), []float64{2.5, 2.5, 2.5}, 0)
	l, _, _ = bcastLayer(t, "Scale", `type: "Scale" scale_param { axis: 1 bias_term: true }`, [][]int{{2, 3, 4}, {3, 4}})
	if blobs := l.LayerBase().Blobs(); len(blobs) != 1 || !slices.Equal(blobs[0].Shape(), []int{3, 4}) {
		t.Errorf("with a scale bottom: %d learnable blobs, want the bias alone, shape [3 4]", len(blobs))
	}
}

// Backward against the definitions: dx = dy * s; the scale's gradient is
// the sum of dy * x over outer and inner, accumulated into a learnable
// scale's diff and assigned to a bottom's; the bias's is the sum of dy.
func TestScaleBackward(t *testing.T) {
	for _, bottomScale := range []bool{false, true} {
		param := `type: "Scale" scale_param { axis: 1 num_axes: 2 filler { type: "gaussian" } bias_term: true }`
		shapes := [][]int{{2, 3, 4, 5}}
		if bottomScale {
			param = `type: "Scale" scale_param { axis: 1 bias_term: true }`
			shapes = append(shapes, []int{3, 4})
		}
		l, bottom, top := bcastLayer(t, "Scale", param, shapes)
		layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
		randomDiffN01(top, 5)
		blobs := l.LayerBase().Blobs()
		scale, bias := blobs[0], blobs[len(blobs)-1]
		if bottomScale {
			scale = bottom[1]
		}
		for _, b := range []*blob.Blob[float64]{scale, bias} {
			for i := range b.MutableCPUDiff() {
				b.MutableCPUDiff()[i] = 7
			}
		}
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(len(bottom)), bottom)
		dy := top.CPUDiff()
		layertest.CheckClose(t, "dx", bottom[0].CPUDiff(), bcastRef(dy, scale.CPUData(), 5, bcastMul), 1e-14)
		prod := make([]float64, len(dy))
		for i := range dy {
			prod[i] = dy[i] * bottom[0].CPUData()[i]
		}
		wantScale, wantBias := bcastSum(prod, 12, 5), bcastSum(dy, 12, 5)
		for i := range wantBias {
			wantBias[i] += 7
			if !bottomScale {
				wantScale[i] += 7
			}
		}
		layertest.CheckClose(t, "scale diff", scale.CPUDiff(), wantScale, 1e-12)
		layertest.CheckClose(t, "bias diff", bias.CPUDiff(), wantBias, 1e-12)
	}
}

// Caffe's TestBackward...InPlace: in place, forward and backward give what
// they give out of place.
func TestScaleInPlace(t *testing.T) {
	for _, c := range []struct {
		param  string
		shapes [][]int
	}{
		{`axis: 0`, [][]int{{2, 3, 4, 5}, {2, 3, 4, 5}}},
		{`axis: 1`, [][]int{{2, 3, 4, 5}, {3, 4}}},
		{`axis: 1 bias_term: true bias_filler { type: "gaussian" }`, [][]int{{2, 3, 4, 5}, {3}}},
		{`axis: 1 num_axes: 2 filler { type: "gaussian" } bias_term: true`, [][]int{{2, 3, 4, 5}}},
	} {
		l, bottom, top := bcastLayer(t, "Scale", `type: "Scale" scale_param { `+c.param+` }`, c.shapes)
		x0 := append([]float64(nil), bottom[0].CPUData()...)
		layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
		wantTop := append([]float64(nil), top.CPUData()...)
		randomDiffN01(top, 3)
		dy := append([]float64(nil), top.CPUDiff()...)
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(len(bottom)), bottom)
		wantDx := append([]float64(nil), bottom[0].CPUDiff()...)
		var wantVec [][]float64
		vecs := append(l.LayerBase().Blobs(), bottom[1:]...)
		for _, b := range vecs {
			wantVec = append(wantVec, append([]float64(nil), b.CPUDiff()...))
			clear(b.MutableCPUDiff())
		}

		x := bottom[0]
		inPlace := append([]*blob.Blob[float64]{x}, bottom[1:]...)
		layertest.Forward(t, l, inPlace, []*blob.Blob[float64]{x})
		layertest.CheckClose(t, c.param+": in-place top", x.CPUData(), wantTop, 1e-14)
		copy(x.MutableCPUDiff(), dy)
		layertest.Backward(t, l, []*blob.Blob[float64]{x}, layertest.AllTrue(len(bottom)), inPlace)
		layertest.CheckClose(t, c.param+": in-place dx", x.CPUDiff(), wantDx, 1e-12)
		for i, b := range vecs {
			layertest.CheckClose(t, c.param+": in-place vector diff", b.CPUDiff(), wantVec[i], 1e-12)
		}
		copy(x.MutableCPUData(), x0)
	}
}

// Without propagate_down to x the scale's gradient must not depend on (or
// scribble over) the bottom's diff.
func TestScaleParamGradientOnly(t *testing.T) {
	l, bottom, top := bcastLayer(t, "Scale", `type: "Scale" scale_param { filler { type: "gaussian" } }`, [][]int{{2, 3, 4}})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	randomDiffN01(top, 4)
	for i := range bottom[0].MutableCPUDiff() {
		bottom[0].MutableCPUDiff()[i] = 42
	}
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{false}, bottom)
	for i, v := range bottom[0].CPUDiff() {
		if v != 42 {
			t.Fatalf("bottom diff[%d] = %v, want it untouched (42)", i, v)
		}
	}
	prod := make([]float64, top.Count())
	for i := range prod {
		prod[i] = top.CPUDiff()[i] * bottom[0].CPUData()[i]
	}
	layertest.CheckClose(t, "scale diff", l.LayerBase().Blobs()[0].CPUDiff(), bcastSum(prod, 3, 4), 1e-12)
}

func TestScaleFromModel(t *testing.T) {
	p := layertest.Param(t, `name: "s" type: "Scale" scale_param { bias_term: true }
	  blobs { shape { dim: 3 } data: 2 data: 3 data: 4 } blobs { shape { dim: 3 } data: 1 data: 0 data: -1 }`)
	l, err := layer.New[float64](p)
	if err != nil {
		t.Fatal(err)
	}
	x := layertest.Blob[float64](t, 1, 3, 2)
	copy(x.MutableCPUData(), []float64{1, 2, 3, 4, 5, 6})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "top", top.CPUData(), []float64{3, 5, 9, 12, 19, 23}, 0)

	// A model without the bias gets a fresh (zero) one.
	p = layertest.Param(t, `name: "s" type: "Scale" scale_param { bias_term: true } blobs { shape { dim: 3 } data: 2 data: 3 data: 4 }`)
	if l, err = layer.New[float64](p); err != nil {
		t.Fatal(err)
	}
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "filled bias", l.LayerBase().Blobs()[1].CPUData(), []float64{0, 0, 0}, 0)
}

func TestScaleErrors(t *testing.T) {
	cases := []struct {
		param  string
		blobs  string
		bottom [][]int
		want   string
	}{
		{`num_axes: -2`, "", [][]int{{2, 3, 4}}, "num_axes must be non-negative, or -1"},
		{`axis: 1 num_axes: 3`, "", [][]int{{2, 3, 4}}, "extends past bottom[0]'s shape"},
		{`axis: 1`, "", [][]int{{2, 3, 4}, {4}}, "dimension mismatch between bottom[0]->shape(1) = 3 and scale->shape(0) = 4"},
		{``, `blobs { shape { dim: 4 } }`, [][]int{{2, 3, 4}}, "dimension mismatch"},
		{`bias_term: true`, `blobs { shape { dim: 3 } } blobs { shape { dim: 4 } }`, [][]int{{2, 3, 4}}, "bias shape 4 (4) differs from the scale's 3 (3)"},
		{``, `blobs { shape { dim: 3 } } blobs { shape { dim: 3 } }`, [][]int{{2, 3, 4}}, "incorrect number of learnable blobs"},
		{``, `blobs { shape { dim: 3 } }`, [][]int{{2, 3, 4}, {3}}, "incorrect number of learnable blobs"},
	}
	for _, c := range cases {
		var bottom []*blob.Blob[float32]
		for _, s := range c.bottom {
			bottom = append(bottom, layertest.Blob[float32](t, s...))
		}
		p := layertest.Param(t, `name: "scale3" type: "Scale" scale_param { `+c.param+` } `+c.blobs)
		for _, b := range p.Blobs {
			n := 1
			for _, d := range b.GetShape().GetDim() {
				n *= int(d)
			}
			b.Data = make([]float32, n)
		}
		l, err := layer.New[float32](p)
		if err == nil {
			err = layer.SetUp(l, bottom, []*blob.Blob[float32]{layertest.Blob[float32](t)})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"scale3" (Scale)`) {
			t.Errorf("%s %s on %v: err = %v, want one naming scale3 and containing %q", c.param, c.blobs, c.bottom, err, c.want)
		}
	}
}

// A bottom large enough to be spread over the cores (uneven parts), with
// a bias: a scale over two axes, and one over the channels of an N x C
// bottom (rows of one value): top = x*s rounded, plus b, exactly; in
// place the same top, and a backward pass that finds x set aside (the
// same gradients as not in place).
func TestScaleAcrossCores(t *testing.T) {
	for _, c := range []struct {
		shape        []int
		axes         string
		inner, count int // values per scale element, scale elements
	}{
		{[]int{3, 7, 41, 53}, "num_axes: 2", 53, 7 * 41},
		{[]int{5000, 7}, "num_axes: 1", 1, 7},
	} {
		testScaleAcrossCores(t, c.shape, `type: "Scale" scale_param { axis: 1 `+c.axes+` filler { type: "gaussian" } bias_term: true bias_filler { type: "gaussian" } }`, c.inner, c.count)
	}
}

func testScaleAcrossCores(t *testing.T, shape []int, param string, inner, count int) {
	var params [][]float32 // the first run's scale and bias, for the second
	run := func(inPlace bool) (y, dx, ds, db []float32) {
		l := layertest.New[float32](t, param)
		x := layertest.Blob[float32](t, shape...)
		layertest.FillGaussian(x, 0, 1, 3)
		xs := append([]float32(nil), x.CPUData()...)
		top := x
		if !inPlace {
			top = layertest.Blob[float32](t)
		}
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top})
		for i, p := range params {
			copy(l.LayerBase().Blobs()[i].MutableCPUData(), p)
		}
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top})
		s, b := l.LayerBase().Blobs()[0].CPUData(), l.LayerBase().Blobs()[1].CPUData()
		params = [][]float32{s, b}
		for i, v := range xs {
			k := (i / inner) % count
			if want := float32(v*s[k]) + b[k]; top.CPUData()[i] != want {
				t.Fatalf("%v in place %v: y[%d] = %v, want %v", shape, inPlace, i, top.CPUData()[i], want)
			}
		}
		y = append(y, top.CPUData()...)
		for i := range top.MutableCPUDiff() {
			top.MutableCPUDiff()[i] = float32(i%5) - 2
		}
		layertest.Backward(t, l, []*blob.Blob[float32]{top}, []bool{true}, []*blob.Blob[float32]{x})
		return y, x.CPUDiff(), l.LayerBase().Blobs()[0].CPUDiff(), l.LayerBase().Blobs()[1].CPUDiff()
	}
	y1, dx1, ds1, db1 := run(false)
	y2, dx2, ds2, db2 := run(true)
	layertest.CheckClose(t, "top, in place", y2, y1, 0)
	layertest.CheckClose(t, "bottom diff, in place", dx2, dx1, 0)
	layertest.CheckClose(t, "scale diff, in place", ds2, ds1, 0)
	layertest.CheckClose(t, "bias diff, in place", db2, db1, 0)
}
