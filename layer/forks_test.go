package layer_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// The layers of Caffe's forks: SENet's Axpy, SSD's Permute and Normalize,
// Faster R-CNN's SmoothL1Loss.

func init() {
	// SmoothL1's kinks are at |d| = 1/sigma^2; gaussian inputs rarely
	// land within the finite-difference step of one.
	positive := func(i int, b *blob.Blob[float64]) {
		layertest.FillUniform(b, 0.2, 1.5, uint64(40+i))
	}
	addGradCases(
		gradCase{name: "Axpy", layer: `type: "Axpy"`, bottom: [][]int{{2, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}}, mode: exhaustive},
		gradCase{name: "Axpy/2-axis-a", layer: `type: "Axpy"`, bottom: [][]int{{2, 3}, {2, 3, 2, 2}, {2, 3, 2, 2}}, mode: exhaustive},
		gradCase{name: "Permute", layer: `type: "Permute" permute_param { order: 0 order: 2 order: 3 order: 1 }`, bottom: [][]int{{2, 3, 4, 5}}, mode: exhaustive},
		gradCase{name: "Permute/partial", layer: `type: "Permute" permute_param { order: 2 }`, bottom: [][]int{{2, 3, 4}}, mode: exhaustive},
		gradCase{name: "Normalize", layer: `type: "Normalize" norm_param { across_spatial: false channel_shared: false scale_filler { type: "gaussian" mean: 2 } }`,
			bottom: [][]int{{2, 3, 2, 3}}, mode: exhaustive},
		gradCase{name: "Normalize/across", layer: `type: "Normalize" norm_param { scale_filler { type: "constant" value: 3 } }`,
			bottom: [][]int{{2, 3, 2, 2}}, mode: exhaustive},
		gradCase{name: "SmoothL1Loss", layer: `type: "SmoothL1Loss" smooth_l1_loss_param { sigma: 2 } loss_weight: 2.5`,
			bottom: [][]int{{4, 6, 1, 1}, {4, 6, 1, 1}}, threshold: 1e-2, kink: 0.25, kinkRange: 0.02},
		gradCase{name: "SmoothL1Loss/weights", layer: `type: "SmoothL1Loss"`,
			bottom: [][]int{{3, 4, 2, 1}, {3, 4, 2, 1}, {3, 4, 2, 1}, {3, 4, 2, 1}}, fill: fillSmoothL1(positive),
			checkBottoms: []int{0, 1}, threshold: 1e-2},
	)
}

// fillSmoothL1 fills the prediction and target with gaussians and the
// weights with positive values.
func fillSmoothL1(positive func(int, *blob.Blob[float64])) func(int, *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) {
		if i >= 2 {
			positive(i, b)
			return
		}
		layertest.FillGaussian(b, 0, 1, uint64(30+i))
	}
}

func TestAxpyForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Axpy"`)
	a, x, y := layertest.Blob[float64](t, 1, 2, 1, 1), layertest.Blob[float64](t, 1, 2, 1, 2), layertest.Blob[float64](t, 1, 2, 1, 2)
	copy(a.MutableCPUData(), []float64{2, -1})
	copy(x.MutableCPUData(), []float64{1, 2, 3, 4})
	copy(y.MutableCPUData(), []float64{10, 20, 30, 40})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{a, x, y}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{a, x, y}, []*blobF64{top})
	if got, want := top.CPUData(), []float64{12, 24, 27, 36}; !slices.Equal(got, want) {
		t.Errorf("Axpy: %v, want %v", got, want)
	}
}

func TestPermuteForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Permute" permute_param { order: 0 order: 2 order: 3 order: 1 }`)
	x := layertest.Blob[float64](t, 2, 3, 2, 4)
	for i := range x.MutableCPUData() {
		x.MutableCPUData()[i] = float64(i)
	}
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{x}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{x}, []*blobF64{top})
	if !slices.Equal(top.Shape(), []int{2, 2, 4, 3}) {
		t.Fatalf("shape %v, want 2 2 4 3", top.Shape())
	}
	y := top.CPUData()
	for n := range 2 {
		for h := range 2 {
			for w := range 4 {
				for c := range 3 {
					got, want := y[((n*2+h)*4+w)*3+c], float64(((n*3+c)*2+h)*4+w)
					if got != want {
						t.Fatalf("top[%d,%d,%d,%d] = %v, want bottom[%d,%d,%d,%d] = %v", n, h, w, c, got, n, c, h, w, want)
					}
				}
			}
		}
	}
	bad := layertest.New[float64](t, `type: "Permute" permute_param { order: 1 order: 1 }`)
	if err := layerSetUpErr(bad, x); err == nil {
		t.Error("an order naming an axis twice was accepted")
	}
}

func layerSetUpErr(l interface{}, x *blobF64) error {
	type setUpper interface {
		LayerSetUp(bottom, top []*blob.Blob[float64]) error
	}
	return l.(setUpper).LayerSetUp([]*blobF64{x}, []*blobF64{layertestBlob()})
}

func layertestBlob() *blobF64 { b, _ := blob.New[float64](); return b }

// TestNormalizeForward checks SSD's formula on hand values: per position
// across channels, scaled per channel.
func TestNormalizeForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Normalize" norm_param { across_spatial: false channel_shared: false scale_filler { type: "constant" value: 20 } }`)
	x := layertest.Blob[float64](t, 1, 2, 1, 2)
	copy(x.MutableCPUData(), []float64{3, 1, 4, -1}) // position 0: (3, 4), position 1: (1, -1)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{x}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{x}, []*blobF64{top})
	eps := 1e-10
	n0, n1 := math.Sqrt(25+eps), math.Sqrt(2+eps)
	want := []float64{20 * 3 / n0, 20 * 1 / n1, 20 * 4 / n0, 20 * -1 / n1}
	layertest.CheckClose(t, "Normalize", top.CPUData(), want, 1e-12)
	if s := l.LayerBase().Blobs()[0]; !slices.Equal(s.Shape(), []int{2}) {
		t.Errorf("scale shape %v, want [2]", s.Shape())
	}
	shared := layertest.New[float64](t, `type: "Normalize"`)
	layertest.SetUp(t, shared, []*blobF64{x}, []*blobF64{top})
	if s := shared.LayerBase().Blobs()[0]; len(s.Shape()) != 0 || s.CPUData()[0] != 1 {
		t.Errorf("channel_shared scale: shape %v value %v, want a blob of no axes holding 1", s.Shape(), s.CPUData())
	}
}

// TestSmoothL1LossForward checks both zones of f with sigma 1 (boundary
// at |d| = 1), the weights and the division by the batch.
func TestSmoothL1LossForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "SmoothL1Loss"`)
	a, b := layertest.Blob[float64](t, 2, 2), layertest.Blob[float64](t, 2, 2)
	in, out := layertest.Blob[float64](t, 2, 2), layertest.Blob[float64](t, 2, 2)
	copy(a.MutableCPUData(), []float64{0.5, 3, -2, 0})
	copy(b.MutableCPUData(), []float64{0, 1, 0, 0.2})
	copy(in.MutableCPUData(), []float64{1, 1, 0.25, 1})
	copy(out.MutableCPUData(), []float64{1, 2, 1, 1})
	top := layertest.Blob[float64](t)
	bottom := []*blobF64{a, b, in, out}
	layertest.SetUp(t, l, bottom, []*blobF64{top})
	loss := layertest.Forward(t, l, bottom, []*blobF64{top})
	// d = 0.5, 2, -0.5, -0.2: 0.125 + 2*(2-0.5) + 0.125 + 0.02, over 2.
	if want := (0.125 + 3 + 0.125 + 0.02) / 2; math.Abs(loss-want) > 1e-12 {
		t.Errorf("loss %v, want %v", loss, want)
	}
}
