package utility_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Tile", Layer: `type: "Tile" tile_param { axis: 1 tiles: 3 }`, Bottom: [][]int{{2, 3, 2, 2}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Tile/axis0", Layer: `type: "Tile" tile_param { axis: 0 tiles: 2 }`, Bottom: [][]int{{2, 3, 2}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Reduction/SUM", Layer: `type: "Reduction" reduction_param { operation: SUM axis: 1 coeff: 2.5 }`, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Reduction/MEAN", Layer: `type: "Reduction" reduction_param { operation: MEAN axis: -1 }`, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Reduction/ASUM", Layer: `type: "Reduction" reduction_param { operation: ASUM coeff: -1 }`, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Exhaustive, Kink: 0, KinkRange: 0.02},
		layertest.GradCase{Name: "Reduction/SUMSQ", Layer: `type: "Reduction" reduction_param { operation: SUMSQ axis: 2 }`, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Parameter", Layer: `type: "Parameter" top: "p" parameter_param { shape { dim: 2 dim: 3 } }`, Mode: layertest.Summed},
		layertest.GradCase{Name: "BatchReindex", Layer: `type: "BatchReindex"`, Bottom: [][]int{{5, 2, 3}, {7}}, Fill: layertest.IndexFill(1, 5), Mode: layertest.Exhaustive, FirstBottomOnly: true},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "ArgMax" argmax_param { top_k: 3 axis: 1 }`, Bottom: [][]int{{4, 10, 5}}, NoPropagate: []int{0}},
		layertest.Parity{Layer: `type: "Tile" tile_param { axis: 1 tiles: 3 }`, Bottom: [][]int{{4, 5, 6}}},
		layertest.Parity{Layer: `type: "Reduction" reduction_param { operation: SUMSQ axis: 1 coeff: 0.5 }`, Bottom: [][]int{{4, 5, 6}}},
		layertest.Parity{Layer: `type: "Parameter" top: "p" parameter_param { shape { dim: 2 dim: 3 } }`},
		layertest.Parity{Layer: `type: "Embed" embed_param { input_dim: 10 num_output: 6 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`,
			Bottom: [][]int{{4, 3}}, Fill: layertest.IndexParityFill(0, 10), NoPropagate: []int{0}},
		layertest.Parity{Layer: `type: "BatchReindex"`, Bottom: [][]int{{5, 4, 3}, {8}}, Fill: layertest.IndexParityFill(1, 5), NoPropagate: []int{1}},
		layertest.Parity{Layer: `type: "Filter" top: "a" top: "b"`, Bottom: [][]int{{6, 4}, {6, 2, 2}, {6, 1}}, Fill: layertest.IndexParityFill(2, 2), NoPropagate: []int{2}},
	)
}

// Caffe's ArgMaxLayerTest: shapes, and each output is the index (or value)
// of the k-th largest entry.
func TestArgMax(t *testing.T) {
	cases := []struct {
		param string
		shape []int
	}{
		{`argmax_param { }`, []int{10, 1, 1, 1}},
		{`argmax_param { out_max_val: true }`, []int{10, 2, 1, 1}},
		{`argmax_param { top_k: 4 }`, []int{10, 1, 4, 1}},
		{`argmax_param { top_k: 4 out_max_val: true }`, []int{10, 2, 4, 1}},
		{`argmax_param { axis: 1 top_k: 2 }`, []int{10, 2, 4, 5}},
		{`argmax_param { axis: -1 out_max_val: true top_k: 3 }`, []int{10, 3, 4, 3}},
	}
	x := layertest.Blob[float64](t, 10, 3, 4, 5)
	layertest.FillUniform(x, 0, 1, 2)
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "ArgMax" `+c.param)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		if !slices.Equal(y.Shape(), c.shape) {
			t.Errorf("%s: top shape %v, want %v", c.param, y.Shape(), c.shape)
			continue
		}
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		ap := l.LayerBase().Param().GetArgmaxParam()
		k := int(ap.GetTopK())
		if ap.Axis == nil {
			for n := range 10 {
				vals := slices.Clone(x.CPUData()[n*60 : (n+1)*60])
				sorted := slices.Clone(vals)
				slices.Sort(sorted)
				slices.Reverse(sorted)
				for j := range k {
					width := 1
					if ap.GetOutMaxVal() {
						width = 2
						if got := y.CPUData()[n*2*k+k+j]; got != sorted[j] {
							t.Fatalf("%s: item %d value %d = %v, want %v", c.param, n, j, got, sorted[j])
						}
					}
					idx := int(y.CPUData()[n*width*k+j])
					if vals[idx] != sorted[j] {
						t.Fatalf("%s: item %d top %d index %d has %v, want %v", c.param, n, j, idx, vals[idx], sorted[j])
					}
				}
			}
			continue
		}
		// Along the last axis (5 entries) or axis 1 (3 entries).
		for i := range y.Count() {
			if ap.GetOutMaxVal() {
				if y.CPUData()[i] < 0 || y.CPUData()[i] > 1 {
					t.Fatalf("%s: value %v out of the data's range", c.param, y.CPUData()[i])
				}
			} else if v := y.CPUData()[i]; v != math.Trunc(v) || v < 0 || v >= 3 {
				t.Fatalf("%s: index %v", c.param, v)
			}
		}
	}
	// Hand-computed, with ties going to the larger index as in Caffe.
	l := layertest.New[float64](t, `type: "ArgMax" argmax_param { top_k: 2 out_max_val: true }`)
	x2 := layertest.Blob[float64](t, 1, 4)
	copy(x2.MutableCPUData(), []float64{3, 7, 7, 1})
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x2}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x2}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.CPUData(), []float64{2, 1, 7, 7}) {
		t.Errorf("argmax of [3 7 7 1] = %v, want [2 1 7 7]", y.CPUData())
	}
	if err := layer.SetUp(layertest.New[float64](t, `type: "ArgMax" argmax_param { top_k: 61 }`), []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y}); err == nil {
		t.Error("top_k beyond the item size was accepted")
	}
}

func TestTileForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Tile" tile_param { axis: 1 tiles: 3 }`)
	x := layertest.Blob[float64](t, 2, 2, 3)
	copy(x.MutableCPUData(), []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{2, 6, 3}) {
		t.Fatalf("shape %v", y.Shape())
	}
	want := []float64{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 7, 8, 9, 10, 11, 12, 7, 8, 9, 10, 11, 12}
	if !slices.Equal(y.CPUData(), want) {
		t.Errorf("tiled %v", y.CPUData())
	}
}

// Caffe's ReductionLayerTest: every operation, axis and coeff.
func TestReductionForward(t *testing.T) {
	x := layertest.Blob[float64](t, 2, 3, 4)
	layertest.FillGaussian(x, 0, 1, 5)
	for _, c := range []struct {
		param string
		shape []int
		f     func(v []float64) float64
	}{
		{`operation: SUM`, []int{}, layertest.Sum},
		{`operation: SUM coeff: 2.3`, []int{}, func(v []float64) float64 { return float64(float32(2.3)) * layertest.Sum(v) }},
		{`operation: MEAN axis: 1`, []int{2}, func(v []float64) float64 { return layertest.Sum(v) / 12 }},
		{`operation: ASUM axis: 2 coeff: -1`, []int{2, 3}, func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += math.Abs(x)
			}
			return -s
		}},
		{`operation: SUMSQ axis: -2`, []int{2}, func(v []float64) float64 { return layertest.Dot(v, v) }},
	} {
		l := layertest.New[float64](t, `type: "Reduction" reduction_param { `+c.param+` }`)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		if !slices.Equal(y.Shape(), c.shape) {
			t.Fatalf("%s: shape %v, want %v", c.param, y.Shape(), c.shape)
		}
		dim := x.Count() / y.Count()
		for i, got := range y.CPUData() {
			if want := c.f(x.CPUData()[i*dim : (i+1)*dim]); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: y[%d] = %v, want %v", c.param, i, got, want)
			}
		}
	}
}

// The top of a Parameter layer is its blob: data and gradient.
func TestParameter(t *testing.T) {
	l := layertest.New[float64](t, `type: "Parameter" parameter_param { shape { dim: 2 dim: 3 } }`)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, nil, []*blob.Blob[float64]{y})
	p := l.LayerBase().Blobs()[0]
	copy(p.MutableCPUData(), []float64{1, 2, 3, 4, 5, 6})
	layertest.Forward(t, l, nil, []*blob.Blob[float64]{y})
	if !slices.Equal(y.CPUData(), p.CPUData()) || !slices.Equal(y.Shape(), []int{2, 3}) {
		t.Errorf("top %v %v", y.Shape(), y.CPUData())
	}
	y.MutableCPUDiff()[4] = 9
	if p.CPUDiff()[4] != 9 {
		t.Error("the top's gradient does not reach the blob")
	}
}

// Caffe's EmbedLayerTest: each index selects its weight row (plus bias);
// the gradient of the weights and bias is checked, the indices get none.
func TestEmbed(t *testing.T) {
	for _, bias := range []bool{false, true} {
		param := `type: "Embed" embed_param { input_dim: 10 num_output: 5 bias_term: ` + strings.ToLower(ftoaBool(bias)) + ` weight_filler { type: "uniform" min: -10 max: 10 } bias_filler { type: "uniform" min: -10 max: 10 } }`
		l := layertest.New[float64](t, param)
		x := layertest.Blob[float64](t, 4, 1, 2)
		copy(x.MutableCPUData(), []float64{3, 0, 9, 3, 1, 2, 7, 4})
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		if !slices.Equal(y.Shape(), []int{4, 1, 2, 5}) {
			t.Fatalf("shape %v", y.Shape())
		}
		w := l.LayerBase().Blobs()[0].CPUData()
		for i, idx := range x.CPUData() {
			for j := range 5 {
				want := w[int(idx)*5+j]
				if bias {
					want += l.LayerBase().Blobs()[1].CPUData()[j]
				}
				if y.CPUData()[i*5+j] != want {
					t.Fatalf("bias %v: y[%d][%d] = %v, want %v", bias, i, j, y.CPUData()[i*5+j], want)
				}
			}
		}
		checker := layertest.NewGradientChecker[float64](1e-2, 1e-3)
		checker.CheckGradientExhaustive(t, layertest.New[float64](t, param), []*blob.Blob[float64]{x}, []*blob.Blob[float64]{layertest.Blob[float64](t)}, 1)
	}
	l := layertest.New[float64](t, `type: "Embed" embed_param { input_dim: 3 num_output: 2 }`)
	x := layertest.Blob[float64](t, 2)
	copy(x.MutableCPUData(), []float64{1, 3})
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	if _, err := layer.Forward(l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y}); err == nil || !strings.Contains(err.Error(), "input_dim=3") {
		t.Errorf("index out of range: %v", err)
	}
}

// Caffe's BatchReindexLayerTest.TestForward.
func TestBatchReindexForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "BatchReindex"`)
	x, idx := layertest.Blob[float64](t, 5, 4, 3, 2), layertest.Blob[float64](t, 6)
	for i := range x.Count() {
		x.MutableCPUData()[i] = float64(i)
	}
	copy(idx.MutableCPUData(), []float64{4, 0, 1, 0, 3, 2})
	y := layertest.Blob[float64](t)
	bottom := []*blob.Blob[float64]{x, idx}
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{6, 4, 3, 2}) {
		t.Fatalf("shape %v", y.Shape())
	}
	for i, src := range idx.CPUData() {
		for j := range 24 {
			if y.CPUData()[i*24+j] != float64(int(src)*24+j) {
				t.Fatalf("y[%d][%d] = %v", i, j, y.CPUData()[i*24+j])
			}
		}
	}
	copy(idx.MutableCPUData(), []float64{4, 0, 5, 0, 3, 2})
	if _, err := layer.Forward(l, bottom, []*blob.Blob[float64]{y}); err == nil || !strings.Contains(err.Error(), "batch size 5") {
		t.Errorf("index beyond the batch: %v", err)
	}
}

// Caffe's FilterLayerTest: items whose selector is 0 are dropped, the
// gradient of dropped items is 0.
func TestFilter(t *testing.T) {
	l := layertest.New[float64](t, `type: "Filter" top: "a" top: "b"`)
	data, labels, sel := layertest.Blob[float64](t, 4, 3, 6, 4), layertest.Blob[float64](t, 4, 1, 1, 1), layertest.Blob[float64](t, 4, 1, 1, 1)
	layertest.FillGaussian(data, 0, 1, 1)
	copy(labels.MutableCPUData(), []float64{1, 2, 3, 4})
	copy(sel.MutableCPUData(), []float64{0, 1, 0, 1})
	bottom := []*blob.Blob[float64]{data, labels, sel}
	top := layertest.Blobs[float64](t, 2)
	layertest.SetUp(t, l, bottom, top)
	if top[0].Shape()[0] != 4 {
		t.Errorf("before the first selector the tops have %d items, want 4", top[0].Shape()[0])
	}
	layertest.Forward(t, l, bottom, top)
	if !slices.Equal(top[0].Shape(), []int{2, 3, 6, 4}) || !slices.Equal(top[1].CPUData(), []float64{2, 4}) {
		t.Fatalf("tops %v %v", top[0].Shape(), top[1].CPUData())
	}
	if !slices.Equal(top[0].CPUData()[72:], data.CPUData()[3*72:]) {
		t.Error("second kept item is not item 3")
	}
	for _, b := range []int{0, 1} {
		checker := layertest.NewGradientChecker[float64](1e-2, 1e-3)
		fresh := layertest.New[float64](t, `type: "Filter" top: "a" top: "b"`)
		checker.CheckGradientExhaustive(t, fresh, bottom, layertest.Blobs[float64](t, 2), b)
	}
	layertest.Backward(t, l, top, []bool{true, false, false}, bottom)
	if data.CPUDiff()[0] != 0 || data.CPUDiff()[2*72+5] != 0 {
		t.Error("a dropped item got a gradient")
	}
}

func ftoaBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
