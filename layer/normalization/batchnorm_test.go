package normalization_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// bnEps is the default eps as the layer sees it: a float32 field.
var bnEps = float64(float32(1e-5))

func init() {
	cases.AddGrad(
		// Caffe's TestGradient: 5x2x3x4, threshold 1e-4.
		layertest.GradCase{Name: "BatchNorm", Layer: `type: "BatchNorm"`, Bottom: [][]int{{5, 2, 3, 4}}, Threshold: 1e-4},
		layertest.GradCase{Name: "BatchNorm/2D", Layer: `type: "BatchNorm" batch_norm_param { eps: 1e-3 }`, Bottom: [][]int{{6, 3}}, Threshold: 1e-4},
		layertest.GradCase{Name: "BatchNorm/1D", Layer: `type: "BatchNorm"`, Bottom: [][]int{{7}}, Threshold: 1e-4},
		// Global statistics (zero, as no model gave them): y = x / sqrt(eps).
		layertest.GradCase{Name: "BatchNorm/global", Layer: `type: "BatchNorm" batch_norm_param { use_global_stats: true eps: 0.5 }`,
			Bottom: [][]int{{2, 3, 2, 2}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "BatchNorm" batch_norm_param { moving_average_fraction: 0.9 }`, Bottom: [][]int{{4, 3, 20, 17}}, Repeat: 3},
		layertest.Parity{Layer: `type: "BatchNorm"`, Bottom: [][]int{{600, 5}}},
		layertest.Parity{Layer: `type: "BatchNorm" phase: TEST ` + bnStats(3, 2), Bottom: [][]int{{4, 3, 20, 17}}},
	)
}

// bnStats is the text of stored statistics for c channels with scale
// factor s: mean[i] = s*(i - 1)/4, variance[i] = s*(1 + i/2).
func bnStats(c int, s float64) string {
	var mean, variance string
	for i := range c {
		mean += " data: " + layertest.Ftoa(s*float64(i-1)/4)
		variance += " data: " + layertest.Ftoa(s*(1+float64(i)/2))
	}
	return fmt.Sprintf("blobs { shape { dim: %d }%s } blobs { shape { dim: %d }%s } blobs { shape { dim: 1 } data: %s }",
		c, mean, c, variance, layertest.Ftoa(s))
}

// bnChannelStats returns the mean and (biased) variance of each channel of
// an N x C x spatial blob.
func bnChannelStats(x []float64, num, channels int) (mean, variance []float64) {
	spatial := len(x) / (num * channels)
	mean, variance = make([]float64, channels), make([]float64, channels)
	m := float64(num * spatial)
	for i, v := range x {
		mean[(i/spatial)%channels] += v / m
	}
	for i, v := range x {
		c := (i / spatial) % channels
		variance[c] += (v - mean[c]) * (v - mean[c]) / m
	}
	return mean, variance
}

func bnForward(t *testing.T, param string, shape []int, seed uint64) (layer.Layer[float64], *blob.Blob[float64], *blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, param)
	x := layertest.Blob[float64](t, shape...)
	layertest.FillGaussian(x, 0, 1, seed)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	return l, x, y
}

// Caffe's TestForward: every channel of the output has mean 0 and
// variance 1; and the output is exactly (x - mean) / sqrt(var + eps).
func TestBatchNormForward(t *testing.T) {
	_, x, y := bnForward(t, `type: "BatchNorm"`, []int{5, 2, 3, 4}, 1)
	mean, variance := bnChannelStats(y.CPUData(), 5, 2)
	for c := range 2 {
		if math.Abs(mean[c]) > 1e-3 || math.Abs(variance[c]-1) > 1e-3 {
			t.Errorf("channel %d: mean %v variance %v, want 0 and 1", c, mean[c], variance[c])
		}
	}
	xm, xv := bnChannelStats(x.CPUData(), 5, 2)
	want := make([]float64, x.Count())
	for i, v := range x.CPUData() {
		c := (i / 12) % 2
		want[i] = (v - xm[c]) / math.Sqrt(xv[c]+bnEps)
	}
	layertest.CheckClose(t, "y", y.CPUData(), want, 1e-12)
}

// Caffe's TestForwardInplace.
func TestBatchNormInPlace(t *testing.T) {
	_, _, want := bnForward(t, `type: "BatchNorm"`, []int{5, 2, 3, 4}, 2)
	l := layertest.New[float64](t, `type: "BatchNorm"`)
	x := layertest.Blob[float64](t, 5, 2, 3, 4)
	layertest.FillGaussian(x, 0, 1, 2)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{x})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{x})
	layertest.CheckClose(t, "in-place y", x.CPUData(), want.CPUData(), 1e-14)

	// Backward in place matches backward out of place.
	ref, xr, yr := bnForward(t, `type: "BatchNorm"`, []int{5, 2, 3, 4}, 2)
	randomDiffN01(yr, 8)
	randomDiffN01(x, 8)
	layertest.Backward(t, ref, []*blob.Blob[float64]{yr}, []bool{true}, []*blob.Blob[float64]{xr})
	layertest.Backward(t, l, []*blob.Blob[float64]{x}, []bool{true}, []*blob.Blob[float64]{x})
	layertest.CheckClose(t, "in-place dx", x.CPUDiff(), xr.CPUDiff(), 1e-12)
}

// The running sums after training passes: s = s*maf + 1, mean = maf*mean +
// batch mean, var = maf*var + m/(m-1) batch var.
func TestBatchNormRunningStatistics(t *testing.T) {
	maf := float64(float32(0.9)) // a float field, as in Caffe
	l := layertest.New[float64](t, `type: "BatchNorm" batch_norm_param { moving_average_fraction: 0.9 }`)
	x := layertest.Blob[float64](t, 4, 3, 2, 5)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	stats := l.LayerBase().Blobs()
	if len(stats) != 3 || !slices.Equal(stats[0].Shape(), []int{3}) || !slices.Equal(stats[1].Shape(), []int{3}) || !slices.Equal(stats[2].Shape(), []int{1}) {
		t.Fatalf("statistics blobs: want mean [3], variance [3], scale factor [1]")
	}
	wantMean, wantVar, wantS := make([]float64, 3), make([]float64, 3), 0.0
	const m = 40.0 // count / channels
	for pass := range 3 {
		layertest.FillGaussian(x, float64(pass), 1+float64(pass), uint64(10+pass))
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		bm, bv := bnChannelStats(x.CPUData(), 4, 3)
		wantS = wantS*maf + 1
		for c := range 3 {
			wantMean[c] = maf*wantMean[c] + bm[c]
			wantVar[c] = maf*wantVar[c] + m/(m-1)*bv[c]
		}
		layertest.CheckClose(t, "scale factor", stats[2].CPUData(), []float64{wantS}, 1e-14)
		layertest.CheckClose(t, "running mean", stats[0].CPUData(), wantMean, 1e-12)
		layertest.CheckClose(t, "running variance", stats[1].CPUData(), wantVar, 1e-12)
	}
}

// With global statistics (TEST phase, or use_global_stats) the output uses
// the stored sums divided by the scale factor, and the stored sums do not
// change; backward is dy / sqrt(var + eps).
func TestBatchNormGlobalStats(t *testing.T) {
	const s = 2.0
	for _, param := range []string{`phase: TEST`, `batch_norm_param { use_global_stats: true }`} {
		l := layertest.New[float64](t, `type: "BatchNorm" `+param+` `+bnStats(3, s))
		x := layertest.Blob[float64](t, 2, 3, 4)
		layertest.FillGaussian(x, 0, 1, 3)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		std := make([]float64, 3)
		want := make([]float64, x.Count())
		for i, v := range x.CPUData() {
			c := (i / 4) % 3
			mean, variance := float64(c-1)/4, 1+float64(c)/2
			std[c] = math.Sqrt(variance + bnEps)
			want[i] = (v - mean) / std[c]
		}
		layertest.CheckClose(t, param+": y", y.CPUData(), want, 1e-12)
		layertest.CheckClose(t, param+": scale factor", l.LayerBase().Blobs()[2].CPUData(), []float64{s}, 0)
		randomDiffN01(y, 4)
		layertest.Backward(t, l, []*blob.Blob[float64]{y}, []bool{true}, []*blob.Blob[float64]{x})
		for i, g := range y.CPUDiff() {
			want[i] = g / std[(i/4)%3]
		}
		layertest.CheckClose(t, param+": dx", x.CPUDiff(), want, 1e-12)
	}
	// use_global_stats: false overrides the TEST phase; a zero scale factor
	// gives zero statistics.
	_, x, y := bnForward(t, `type: "BatchNorm" phase: TEST batch_norm_param { use_global_stats: false }`, []int{4, 2, 3}, 5)
	if _, v := bnChannelStats(y.CPUData(), 4, 2); math.Abs(v[0]-1) > 1e-3 {
		t.Errorf("use_global_stats false in TEST: variance %v, want batch statistics (1)", v[0])
	}
	_, x, y = bnForward(t, `type: "BatchNorm" phase: TEST`, []int{4, 2, 3}, 5)
	want := make([]float64, x.Count())
	for i, v := range x.CPUData() {
		want[i] = v / math.Sqrt(bnEps)
	}
	layertest.CheckClose(t, "zero scale factor", y.CPUData(), want, 1e-12)
}

// The statistics are not parameters: lr_mult 0 in the layer's parameter,
// and backward leaves their diffs at 0.
func TestBatchNormStatisticsAreFrozen(t *testing.T) {
	l, x, y := bnForward(t, `type: "BatchNorm"`, []int{3, 2, 2}, 6)
	specs := l.LayerBase().Param().GetParam()
	if len(specs) != 3 {
		t.Fatalf("%d ParamSpecs, want 3", len(specs))
	}
	for i, ps := range specs {
		if ps.LrMult == nil || ps.GetLrMult() != 0 {
			t.Errorf("param %d: lr_mult %v, want an explicit 0", i, ps.GetLrMult())
		}
	}
	randomDiffN01(y, 1)
	layertest.Backward(t, l, []*blob.Blob[float64]{y}, []bool{true}, []*blob.Blob[float64]{x})
	for i, b := range l.LayerBase().Blobs() {
		for _, v := range b.CPUDiff() {
			if v != 0 {
				t.Fatalf("statistics blob %d has diff %v after backward, want 0", i, v)
			}
		}
	}
	// The old definition's three specs are zeroed, as Caffe's upgrade does.
	l = layertest.New[float64](t, `type: "BatchNorm" param { lr_mult: 1 } param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 1 }`)
	for i, ps := range l.LayerBase().Param().GetParam() {
		if ps.GetLrMult() != 0 || ps.GetDecayMult() != 0 {
			t.Errorf("old-style param %d: lr_mult %v decay_mult %v, want 0 and 0", i, ps.GetLrMult(), ps.GetDecayMult())
		}
	}
	// One spec with lr_mult 0 is kept and the others added.
	l = layertest.New[float64](t, `type: "BatchNorm" param { lr_mult: 0 name: "m" }`)
	if specs := l.LayerBase().Param().GetParam(); len(specs) != 3 || specs[0].GetName() != "m" {
		t.Errorf("specs %v, want the given one and two added", specs)
	}
}

func TestBatchNormErrors(t *testing.T) {
	_, err := layer.New[float32](layertest.Param(t, `name: "bn" type: "BatchNorm" param { lr_mult: 1 }`))
	if err == nil || !strings.Contains(err.Error(), "cannot configure batch normalization statistics as layer parameters") || !strings.Contains(err.Error(), `"bn"`) {
		t.Errorf("lr_mult 1: err = %v", err)
	}
	l := layertest.New[float32](t, `name: "bn" type: "BatchNorm"`)
	x, y := layertest.Blob[float32](t, 2, 3, 4), layertest.Blob[float32](t)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	if err := x.Reshape([]int{2, 4, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := layer.Forward(l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y}); err == nil || !strings.Contains(err.Error(), "has 4 channels, the layer was set up for 3") {
		t.Errorf("channel change: err = %v", err)
	}
	p := layertest.Param(t, `name: "bn" type: "BatchNorm" blobs { shape { dim: 4 } } blobs { shape { dim: 4 } } blobs { shape { dim: 1 } }`)
	for _, b := range p.Blobs {
		b.Data = make([]float32, b.GetShape().GetDim()[0])
	}
	l, err = layer.New[float32](p)
	if err == nil {
		err = layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, 2, 3, 4)}, []*blob.Blob[float32]{y})
	}
	if err == nil || !strings.Contains(err.Error(), "incorrect mean shape") {
		t.Errorf("statistics of the wrong shape: err = %v", err)
	}
}
