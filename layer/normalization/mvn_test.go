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
		layertest.GradCase{Name: "MVN", Layer: `type: "MVN"`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "MVN/across", Layer: `type: "MVN" mvn_param { across_channels: true }`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "MVN/mean_only", Layer: `type: "MVN" mvn_param { normalize_variance: false }`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Exhaustive},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "MVN"`, Bottom: [][]int{{2, 3, 10, 10}}},
	)
}

// Caffe's MVNLayerTest: every normalised slice has mean 0 and variance 1.
func TestMVNForward(t *testing.T) {
	for _, c := range []struct {
		param   string
		perItem bool
		normVar bool
	}{{"", false, true}, {"mvn_param { across_channels: true }", true, true}, {"mvn_param { normalize_variance: false }", false, false}} {
		l := layertest.New[float64](t, `type: "MVN" `+c.param)
		x := layertest.Blob[float64](t, 2, 3, 4, 5)
		layertest.FillGaussian(x, 3, 2, 1)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		dim := 20
		if c.perItem {
			dim = 60
		}
		for s := range y.Count() / dim {
			v := y.CPUData()[s*dim : (s+1)*dim]
			mean := layertest.Sum(v) / float64(dim)
			variance := layertest.Dot(v, v)/float64(dim) - mean*mean
			if math.Abs(mean) > 1e-12 {
				t.Errorf("%s: slice %d mean %v", c.param, s, mean)
			}
			if c.normVar && math.Abs(variance-1) > 1e-6 {
				t.Errorf("%s: slice %d variance %v", c.param, s, variance)
			}
		}
	}
}

// MVN in place (top = bottom) computes the gradient it computes out of
// place.
func TestMVNInPlace(t *testing.T) {
	x := layertest.Blob[float64](t, 2, 3, 4, 5)
	layertest.FillGaussian(x, 1, 2, 1)
	dy := layertest.Blob[float64](t, 2, 3, 4, 5)
	layertest.FillGaussian(dy, 0, 1, 2)
	out := layertest.New[float64](t, `type: "MVN"`)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, out, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, out, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	copy(y.MutableCPUDiff(), dy.CPUData())
	layertest.Backward(t, out, []*blob.Blob[float64]{y}, []bool{true}, []*blob.Blob[float64]{x})
	want := slices.Clone(x.CPUDiff())

	in := layertest.New[float64](t, `type: "MVN"`)
	xi := layertest.Blob[float64](t, 2, 3, 4, 5)
	layertest.FillGaussian(xi, 1, 2, 1)
	layertest.SetUp(t, in, []*blob.Blob[float64]{xi}, []*blob.Blob[float64]{xi})
	layertest.Forward(t, in, []*blob.Blob[float64]{xi}, []*blob.Blob[float64]{xi})
	layertest.CheckClose(t, "in-place output", xi.CPUData(), y.CPUData(), 1e-12)
	copy(xi.MutableCPUDiff(), dy.CPUData())
	layertest.Backward(t, in, []*blob.Blob[float64]{xi}, []bool{true}, []*blob.Blob[float64]{xi})
	layertest.CheckClose(t, "in-place gradient", xi.CPUDiff(), want, 1e-12)
}
