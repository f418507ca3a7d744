package normalization_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Normalize", Layer: `type: "Normalize" norm_param { across_spatial: false channel_shared: false scale_filler { type: "gaussian" mean: 2 } }`,
			Bottom: [][]int{{2, 3, 2, 3}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Normalize/across", Layer: `type: "Normalize" norm_param { scale_filler { type: "constant" value: 3 } }`,
			Bottom: [][]int{{2, 3, 2, 2}}, Mode: layertest.Exhaustive},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "BN" phase: TEST bn_param { slope_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 3, 5}}},
		layertest.Parity{Layer: `type: "BN" bn_param { frozen: true slope_filler { type: "constant" value: 0.5 } }`, Bottom: [][]int{{2, 3, 4, 4}}},
		layertest.Parity{Layer: `type: "BN" bn_param { slope_filler { type: "constant" value: 1.5 } }`, Bottom: [][]int{{4, 3, 5, 5}}},
		layertest.Parity{Layer: `type: "Normalize" norm_param { across_spatial: false }`, Bottom: [][]int{{2, 3, 4, 5}}},
	)
}

// TestNormalizeForward checks SSD's formula on hand values: per position
// across channels, scaled per channel.
func TestNormalizeForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Normalize" norm_param { across_spatial: false channel_shared: false scale_filler { type: "constant" value: 20 } }`)
	x := layertest.Blob[float64](t, 1, 2, 1, 2)
	copy(x.MutableCPUData(), []float64{3, 1, 4, -1}) // position 0: (3, 4), position 1: (1, -1)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	eps := 1e-10
	n0, n1 := math.Sqrt(25+eps), math.Sqrt(2+eps)
	want := []float64{20 * 3 / n0, 20 * 1 / n1, 20 * 4 / n0, 20 * -1 / n1}
	layertest.CheckClose(t, "Normalize", top.CPUData(), want, 1e-12)
	if s := l.LayerBase().Blobs()[0]; !slices.Equal(s.Shape(), []int{2}) {
		t.Errorf("scale shape %v, want [2]", s.Shape())
	}
	shared := layertest.New[float64](t, `type: "Normalize"`)
	layertest.SetUp(t, shared, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	if s := shared.LayerBase().Blobs()[0]; len(s.Shape()) != 0 || s.CPUData()[0] != 1 {
		t.Errorf("channel_shared scale: shape %v value %v, want a blob of no axes holding 1", s.Shape(), s.CPUData())
	}
}

func init() {
	const tsn = `type: "BN" bn_param { slope_filler { type: "gaussian" mean: 1 std: 0.3 } bias_filler { type: "gaussian" std: 0.3 } }`
	cases.AddGrad(
		layertest.GradCase{Name: "BN", Layer: tsn, Bottom: [][]int{{3, 2, 2, 3}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "BN/2-axis", Layer: tsn, Bottom: [][]int{{5, 3}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "BN/frozen", Layer: `type: "BN" bn_param { frozen: true slope_filler { type: "constant" value: 1.5 } }`,
			Bottom: [][]int{{2, 3, 2, 2}}, Mode: layertest.Exhaustive},
	)
}

// TestBN checks TSN's BN on hand values: the batch statistics, the running
// ones, the ParamSpecs it forces and the TEST phase.
func TestBN(t *testing.T) {
	l := layertest.New[float64](t, `type: "BN" bn_param { slope_filler { type: "constant" value: 2 } bias_filler { type: "constant" value: 1 } momentum: 0.5 eps: 0 }`)
	x := layertest.Blob[float64](t, 2, 1, 1, 2)
	copy(x.MutableCPUData(), []float64{1, 3, 5, 7}) // mean 4, variance 5
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	s := math.Sqrt(5)
	layertest.CheckClose(t, "BN", top.CPUData(), []float64{2*-3/s + 1, 2*-1/s + 1, 2*1/s + 1, 2*3/s + 1}, 1e-12)
	b := l.LayerBase().Blobs()
	if m, v := b[2].CPUData()[0], b[3].CPUData()[0]; m != 2 || v != 2.5 {
		t.Errorf("running mean %v and variance %v, want 2 and 2.5 (half of the batch's, from 0)", m, v)
	}
	if !slices.Equal(b[0].Shape(), []int{1, 1}) {
		t.Errorf("blob shape %v, want 1 x C", b[0].Shape())
	}
	for i, ps := range l.LayerBase().Param().GetParam() {
		if lr := ps.GetLrMult(); (i >= 2) != (lr == 0) {
			t.Errorf("param %d: lr_mult %v", i, lr)
		}
	}
	test := layertest.New[float64](t, `type: "BN" phase: TEST bn_param { eps: 0 }`)
	test.LayerBase().SetBlobs(b)
	layertest.SetUp(t, test, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, test, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	// Slope 2, bias 1, running mean 2 and variance 2.5.
	r := math.Sqrt(2.5)
	layertest.CheckClose(t, "BN TEST", top.CPUData(), []float64{2*-1/r + 1, 2*1/r + 1, 2*3/r + 1, 2*5/r + 1}, 1e-12)
}
