package layer_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
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

func init() {
	rois := func(i int, b *blob.Blob[float64]) {
		if i == 0 {
			// Distinct values 0.05 apart, so that no finite-difference
			// step changes which element a bin takes.
			x := b.MutableCPUData()
			for k, v := range rand.New(rand.NewPCG(7, 7)).Perm(len(x)) {
				x[k] = 0.05 * float64(v)
			}
			return
		}
		// Regions in a 16 x 12 image over a 8 x 6 map (scale 0.5):
		// whole, corner, one pixel, past the edge.
		copy(b.MutableCPUData(), []float64{
			0, 0, 0, 15, 11,
			1, 2, 3, 9, 8,
			1, 4, 4, 4, 4,
			0, 10, 6, 30, 20,
		})
	}
	addGradCases(gradCase{name: "ROIPooling", layer: `type: "ROIPooling" roi_pooling_param { pooled_h: 3 pooled_w: 2 spatial_scale: 0.5 }`,
		bottom: [][]int{{2, 2, 6, 8}, {4, 5}}, fill: rois, firstBottomOnly: true, mode: exhaustive})
}

// TestPriorBox checks SSD's boxes against values computed here from the
// formula: a 2 x 2 map of a 300 x 300 image, min_size 30.7 (used as 30, as
// SSD truncates it), max_size 60, aspect ratio 2 flipped, four variances.
func TestPriorBox(t *testing.T) {
	l := layertest.New[float64](t, `type: "PriorBox" prior_box_param { min_size: 30.7 max_size: 60 aspect_ratio: 2 flip: true
		variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 }`)
	fmap, img := layertest.Blob[float64](t, 1, 8, 2, 2), layertest.Blob[float64](t, 1, 3, 300, 300)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{fmap, img}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{fmap, img}, []*blobF64{top})
	if !slices.Equal(top.Shape(), []int{1, 2, 2 * 2 * 4 * 4}) {
		t.Fatalf("shape %v, want 1 x 2 x 64", top.Shape())
	}
	var want []float64
	box := func(cx, cy, w, h float64) {
		want = append(want, (cx-w/2)/300, (cy-h/2)/300, (cx+w/2)/300, (cy+h/2)/300)
	}
	for h := range 2 {
		for w := range 2 {
			cx, cy := (float64(w)+0.5)*150, (float64(h)+0.5)*150
			box(cx, cy, 30, 30)
			box(cx, cy, math.Sqrt(30*60), math.Sqrt(30*60))
			box(cx, cy, 30*math.Sqrt(2), 30/math.Sqrt(2))
			box(cx, cy, 30*math.Sqrt(0.5), 30/math.Sqrt(0.5))
		}
	}
	for range 16 {
		want = append(want, 0.1, 0.1, 0.2, 0.2)
	}
	layertest.CheckClose(t, "PriorBox", top.CPUData(), want, 1e-6)
	clipped := layertest.New[float64](t, `type: "PriorBox" prior_box_param { min_size: 200 clip: true step: 100 offset: 0 img_size: 300 }`)
	layertest.SetUp(t, clipped, []*blobF64{fmap, img}, []*blobF64{top})
	layertest.Forward(t, clipped, []*blobF64{fmap, img}, []*blobF64{top})
	// First box: centre (0, 0), side 200: clipped to (0, 0, 1/3, 1/3).
	layertest.CheckClose(t, "clipped", top.CPUData()[:4], []float64{0, 0, 100.0 / 300, 100.0 / 300}, 1e-12)
	for _, bad := range []string{`prior_box_param { }`, `prior_box_param { min_size: 30 max_size: 20 }`,
		`prior_box_param { min_size: 30 variance: 0.1 variance: 0.2 }`, `prior_box_param { min_size: 30 step: 8 step_h: 8 }`} {
		if _, err := layer.New[float64](layertest.Param(t, `type: "PriorBox" `+bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestROIPooling checks the bins on a hand example: a 1 x 1 x 4 x 4 map
// holding 0..15, the region (1, 1)-(3, 3) at scale 1 pooled 2 x 2.
func TestROIPooling(t *testing.T) {
	l := layertest.New[float64](t, `type: "ROIPooling" roi_pooling_param { pooled_h: 2 pooled_w: 2 spatial_scale: 1 }`)
	fmap, rois := layertest.Blob[float64](t, 1, 1, 4, 4), layertest.Blob[float64](t, 2, 5)
	for i := range 16 {
		fmap.MutableCPUData()[i] = float64(i)
	}
	// The second region rounds 0.4 -> 0 and 0.6 -> 1 and covers (0, 0)-(1, 1).
	copy(rois.MutableCPUData(), []float64{0, 1, 1, 3, 3, 0, 0.4, 0.4, 0.6, 0.6})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{fmap, rois}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{fmap, rois}, []*blobF64{top})
	// Region 1 is 3 x 3, bins of 1.5: rows [1, 3) and [2, 4), columns likewise.
	// Region 2 is 2 x 2, bins of one element each.
	want := []float64{10, 11, 14, 15, 0, 1, 4, 5}
	if got := top.CPUData(); !slices.Equal(got, want) {
		t.Errorf("ROIPooling: %v, want %v", got, want)
	}
}

func init() {
	const tsn = `type: "BN" bn_param { slope_filler { type: "gaussian" mean: 1 std: 0.3 } bias_filler { type: "gaussian" std: 0.3 } }`
	addGradCases(
		gradCase{name: "BN", layer: tsn, bottom: [][]int{{3, 2, 2, 3}}, mode: exhaustive},
		gradCase{name: "BN/2-axis", layer: tsn, bottom: [][]int{{5, 3}}, mode: exhaustive},
		gradCase{name: "BN/frozen", layer: `type: "BN" bn_param { frozen: true slope_filler { type: "constant" value: 1.5 } }`,
			bottom: [][]int{{2, 3, 2, 2}}, mode: exhaustive},
	)
}

// TestBN checks TSN's BN on hand values: the batch statistics, the running
// ones, the ParamSpecs it forces and the TEST phase.
func TestBN(t *testing.T) {
	l := layertest.New[float64](t, `type: "BN" bn_param { slope_filler { type: "constant" value: 2 } bias_filler { type: "constant" value: 1 } momentum: 0.5 eps: 0 }`)
	x := layertest.Blob[float64](t, 2, 1, 1, 2)
	copy(x.MutableCPUData(), []float64{1, 3, 5, 7}) // mean 4, variance 5
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{x}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{x}, []*blobF64{top})
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
	layertest.SetUp(t, test, []*blobF64{x}, []*blobF64{top})
	layertest.Forward(t, test, []*blobF64{x}, []*blobF64{top})
	// Slope 2, bias 1, running mean 2 and variance 2.5.
	r := math.Sqrt(2.5)
	layertest.CheckClose(t, "BN TEST", top.CPUData(), []float64{2*-1/r + 1, 2*1/r + 1, 2*3/r + 1, 2*5/r + 1}, 1e-12)
}

func init() {
	// GPU halves (Axpy, BN, Normalize, Permute, SmoothL1Loss) against the
	// CPU; the others (PriorBox, DetectionEvaluate) run their CPU halves
	// on a GPU through the blobs' synced memory, which these cases check.
	addParityCases(
		layertest.Parity{Layer: `type: "BN" phase: TEST bn_param { slope_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 3, 5}}},
		layertest.Parity{Layer: `type: "BN" bn_param { frozen: true slope_filler { type: "constant" value: 0.5 } }`, Bottom: [][]int{{2, 3, 4, 4}}},
		layertest.Parity{Layer: `type: "SmoothL1Loss" smooth_l1_loss_param { sigma: 3 }`, Bottom: [][]int{{3, 8}, {3, 8}, {3, 8}, {3, 8}}, NoPropagate: []int{2, 3}},
		layertest.Parity{Layer: `type: "Axpy"`, Bottom: [][]int{{2, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}}},
		layertest.Parity{Layer: `type: "BN" bn_param { slope_filler { type: "constant" value: 1.5 } }`, Bottom: [][]int{{4, 3, 5, 5}}},
		layertest.Parity{Layer: `type: "Normalize" norm_param { across_spatial: false }`, Bottom: [][]int{{2, 3, 4, 5}}},
		layertest.Parity{Layer: `type: "Permute" permute_param { order: 0 order: 3 order: 1 order: 2 }`, Bottom: [][]int{{2, 3, 4, 5}}},
		layertest.Parity{Layer: `type: "PriorBox" prior_box_param { min_size: 10 max_size: 20 aspect_ratio: 3 }`, Bottom: [][]int{{1, 8, 3, 3}, {1, 3, 30, 30}}},
		layertest.Parity{Layer: `type: "SmoothL1Loss"`, Bottom: [][]int{{4, 6}, {4, 6}}},
		layertest.Parity{Layer: `type: "DetectionEvaluate" detection_evaluate_param { num_classes: 3 }`,
			Bottom: [][]int{{1, 1, 2, 7}, {1, 1, 1, 8}}, Fill: func(i int, b []float64) {
				if i == 0 {
					copy(b, []float64{0, 1, 0.9, 0.1, 0.1, 0.5, 0.5, 0, 2, 0.4, 0.2, 0.2, 0.6, 0.6})
					return
				}
				copy(b, []float64{0, 1, 0, 0.1, 0.1, 0.45, 0.5, 0})
			}},
		layertest.Parity{Layer: `type: "DetectionOutput" detection_output_param { num_classes: 3 code_type: CENTER_SIZE nms_param { nms_threshold: 0.5 top_k: 5 } keep_top_k: 6 }`,
			Bottom: [][]int{{2, 10 * 4}, {2, 10 * 3}, {1, 2, 10 * 4}}, Fill: func(i int, b []float64) {
				for k := range b {
					switch i {
					case 0: // small offsets
						b[k] = 0.3 * math.Sin(float64(3*k))
					case 1: // scores
						b[k] = 0.5 + 0.5*math.Sin(float64(7*k))
					case 2: // ten priors on a diagonal, then variances
						p := k / 4
						if p >= 10 {
							b[k] = 0.1
							continue
						}
						b[k] = 0.08*float64(p) + []float64{0, 0, 0.2, 0.25}[k%4]
					}
				}
			}},
		layertest.Parity{Layer: `type: "ROIPooling" roi_pooling_param { pooled_h: 2 pooled_w: 3 spatial_scale: 0.25 }`,
			Bottom: [][]int{{2, 3, 8, 8}, {3, 5}}, Fill: func(i int, b []float64) {
				if i == 1 {
					copy(b, []float64{0, 0, 0, 31, 31, 1, 4, 8, 20, 16, 1, 12, 12, 13, 13})
					return
				}
				for k := range b {
					b[k] = math.Sin(float64(k))
				}
			}},
	)
}

// TestDetectionOutput checks decoding, per-class NMS, the confidence
// threshold and keep_top_k on a hand case: three priors, A and B
// overlapping (IoU about 0.9), C apart; class 1 prefers A, class 2 C.
func TestDetectionOutput(t *testing.T) {
	text := `type: "DetectionOutput" detection_output_param { num_classes: 3 background_label_id: 0 code_type: CENTER_SIZE
		nms_param { nms_threshold: 0.45 } confidence_threshold: 0.25 keep_top_k: 3 }`
	l := layertest.New[float64](t, text)
	loc, conf, prior := layertest.Blob[float64](t, 1, 12), layertest.Blob[float64](t, 1, 9), layertest.Blob[float64](t, 1, 2, 12)
	a, b, c := []float64{0.1, 0.1, 0.5, 0.5}, []float64{0.12, 0.1, 0.52, 0.5}, []float64{0.6, 0.6, 0.9, 0.9}
	copy(prior.MutableCPUData(), slices.Concat(a, b, c, []float64{0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2}))
	// Scores per prior: background, class 1, class 2.
	copy(conf.MutableCPUData(), []float64{0, 0.9, 0.2, 0, 0.8, 0.7, 0, 0.3, 0.95})
	top := layertest.Blob[float64](t)
	bottom := []*blobF64{loc, conf, prior}
	layertest.SetUp(t, l, bottom, []*blobF64{top})
	layertest.Forward(t, l, bottom, []*blobF64{top})
	// Class 1 keeps A (B overlaps it, C 0.3 is dropped by keep_top_k);
	// class 2 keeps C and B (A is under the threshold).
	want := slices.Concat([]float64{0, 1, 0.9}, a, []float64{0, 2, 0.95}, c, []float64{0, 2, 0.7}, b)
	if !slices.Equal(top.Shape(), []int{1, 1, 3, 7}) {
		t.Fatalf("shape %v, want 1 x 1 x 3 x 7", top.Shape())
	}
	layertest.CheckClose(t, "detections", top.CPUData(), want, 1e-6)

	// A predicted offset moves the box: CENTER_SIZE with variances 0.1 and
	// 0.2, loc (1, 0, ln 2 / 0.2, 0) on prior C: centre x + 0.1 * 0.3,
	// width doubled.
	copy(loc.MutableCPUData()[8:], []float64{1, 0, math.Ln2 / 0.2, 0})
	layertest.Forward(t, l, bottom, []*blobF64{top})
	cx, w := 0.75+0.1*0.3, 0.6
	layertest.CheckClose(t, "decoded C", top.CPUData()[10:14], []float64{cx - w/2, 0.6, cx + w/2, 0.9}, 1e-6)

	// Nothing above the threshold: one row of -1 per image, image index first.
	copy(conf.MutableCPUData(), []float64{1, 0.1, 0.1, 1, 0.1, 0.1, 1, 0.1, 0.1})
	layertest.Forward(t, l, bottom, []*blobF64{top})
	if got := top.CPUData(); !slices.Equal(got, []float64{0, -1, -1, -1, -1, -1, -1}) {
		t.Errorf("no detections: %v", got)
	}
}

// TestProposalAnchors checks py-faster-rcnn's nine default anchors, the
// values its generate_anchors.py documents.
func TestProposalAnchors(t *testing.T) {
	want := [][4]float32{
		{-84, -40, 99, 55}, {-176, -88, 191, 103}, {-360, -184, 375, 199},
		{-56, -56, 71, 71}, {-120, -120, 135, 135}, {-248, -248, 263, 263},
		{-36, -80, 51, 95}, {-80, -168, 95, 183}, {-168, -344, 183, 359},
	}
	if got := layer.ProposalAnchors(); !slices.Equal(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

// TestProposal runs the Python-registered proposal layer on a hand case:
// a 1 x 2 map of a 100 x 100 image, zero deltas, three anchors scored.
func TestProposal(t *testing.T) {
	l := layertest.New[float64](t, `type: "Python" phase: TEST python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "'feat_stride': 16" }`)
	prob, deltas, info := layertest.Blob[float64](t, 1, 18, 1, 2), layertest.Blob[float64](t, 1, 36, 1, 2), layertest.Blob[float64](t, 1, 3)
	copy(info.MutableCPUData(), []float64{100, 100, 1})
	p := prob.MutableCPUData() // channel 9+k is anchor k's foreground, 2 positions each
	// bbox_transform_inv with zero deltas moves the far corner by one
	// pixel (x2 = x1 + width): py-faster-rcnn's arithmetic, kept.
	p[(9+4)*2+0] = 0.9 // anchor 4 at x 0: (-120, -120, 136, 136), clipped to the image
	p[(9+3)*2+1] = 0.8 // anchor 3 at x 16: (-40, -56, 88, 72), clipped to (0, 0, 88, 72)
	p[(9+0)*2+0] = 0.7 // anchor 0 at x 0: (0, 0, 99, 56) clipped: IoU 0.712 with the second, dropped
	rois, scores := layertest.Blob[float64](t), layertest.Blob[float64](t)
	bottom, top := []*blobF64{prob, deltas, info}, []*blobF64{rois, scores}
	layertest.SetUp(t, l, bottom, top)
	layertest.Forward(t, l, bottom, top)
	r, s := rois.CPUData(), scores.CPUData()
	if rois.Shape()[1] != 5 || len(s) != rois.Shape()[0] {
		t.Fatalf("rois %v, scores %v", rois.Shape(), scores.Shape())
	}
	if !slices.Equal(r[:10], []float64{0, 0, 0, 99, 99, 0, 0, 0, 88, 72}) || s[0] != float64(float32(0.9)) || s[1] != float64(float32(0.8)) {
		t.Errorf("first proposals %v scores %v", r[:10], s[:2])
	}
	for i := 2; i < len(s); i++ {
		if s[i] != 0 {
			t.Errorf("proposal %d scores %v: the 0.7 box should have been suppressed", i, s[i])
		}
	}
}

// TestProposalFractionalStride: feat_stride is a number, as
// py-faster-rcnn's YAML reads it and numpy multiplies it in: 0.5 moves the
// anchors of map column 1 by half a pixel (it was truncated to 0, leaving
// every anchor at column 0's place); a stride that is not positive is an
// error naming the field.
func TestProposalFractionalStride(t *testing.T) {
	l := layertest.New[float64](t, `type: "Python" phase: TEST python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "'feat_stride': 0.5" }`)
	prob, deltas, info := layertest.Blob[float64](t, 1, 18, 1, 2), layertest.Blob[float64](t, 1, 36, 1, 2), layertest.Blob[float64](t, 1, 3)
	copy(info.MutableCPUData(), []float64{100, 100, 1})
	prob.MutableCPUData()[(9+3)*2+1] = 0.9 // anchor 3 (-56, -56, 71, 71) at column 1: x + 0.5
	rois := layertest.Blob[float64](t)
	bottom, top := []*blobF64{prob, deltas, info}, []*blobF64{rois}
	layertest.SetUp(t, l, bottom, top)
	layertest.Forward(t, l, bottom, top)
	// (-55.5, -56, 71.5, 71), its far corner one pixel further by
	// bbox_transform_inv, clipped to the image.
	if got := rois.CPUData()[:5]; !slices.Equal(got, []float64{0, 0, 0, 72.5, 72}) {
		t.Errorf("best proposal %v, want [0 0 0 72.5 72]", got)
	}
	for _, stride := range []string{"'feat_stride': 0", "'feat_stride': -16", "'scales': [8]"} {
		p := layertest.Param(t, `type: "Python" python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" }`)
		p.PythonParam.ParamStr = &stride
		if _, err := layer.New[float32](p); err == nil || !strings.Contains(err.Error(), "positive 'feat_stride'") {
			t.Errorf("feat_stride %s: err = %v", stride, err)
		}
	}
}

// multiboxData is MultiBoxLoss's inputs for the hand case (locations,
// confidences, priors, ground truth): four priors around one box (0.1,
// 0.1, 0.5, 0.5) of label 1, overlapping it by 0.9, 0.6, 0.14 and 0.
func multiboxData() [][]float64 {
	return [][]float64{
		make([]float64, 16),
		// Three classes; prior 3's background is the least likely.
		{0, 0, 0, 0, 0, 0, 0, 0, 0, -2, 1, 0},
		{
			0.1, 0.1, 0.5, 0.46, 0.2, 0.1, 0.6, 0.5, 0.3, 0.3, 0.7, 0.7, 0.7, 0.7, 0.9, 0.9,
			0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2,
		},
		{0, 1, 0, 0.1, 0.1, 0.5, 0.5, 0},
	}
}

// multiboxShapes are the hand case's bottom shapes.
var multiboxShapes = [][]int{{1, 16}, {1, 12}, {1, 2, 16}, {1, 1, 1, 8}}

func multiboxBottoms(t *testing.T) []*blobF64 {
	var out []*blobF64
	for i, d := range multiboxData() {
		b := layertest.Blob[float64](t, multiboxShapes[i]...)
		copy(b.MutableCPUData(), d)
		out = append(out, b)
	}
	return out
}

// TestMultiBoxLoss checks matching, encoding, mining and normalization on
// the hand case against values worked out here: priors 0 (bipartite) and 1
// (overlap 0.6 >= 0.5) match; with neg_pos_ratio 0.5 one negative is
// mined, prior 3, whose background scores worst.
func TestMultiBoxLoss(t *testing.T) {
	l := layertest.New[float64](t, `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 overlap_threshold: 0.5
		code_type: CENTER_SIZE neg_pos_ratio: 0.5 neg_overlap: 0.5 mining_type: MAX_NEGATIVE match_type: PER_PREDICTION }`)
	bottom := multiboxBottoms(t)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, bottom, []*blobF64{top})
	loss := layertest.Forward(t, l, bottom, []*blobF64{top})
	// Location targets (variances 0.1, 0.1, 0.2, 0.2), predictions 0.
	t0 := []float64{0, 0.02 / 0.36 / 0.1, 0, math.Log(0.4/0.36) / 0.2}
	t1 := []float64{-0.1 / 0.4 / 0.1, 0, 0, 0}
	var locLoss float64
	for _, v := range slices.Concat(t0, t1) {
		if d := math.Abs(v); d < 1 {
			locLoss += d * d / 2
		} else {
			locLoss += d - 0.5
		}
	}
	// Confidences: two positives (label 1) and prior 3 as background.
	logSoftmax := func(x []float64, k int) float64 {
		var s float64
		for _, v := range x {
			s += math.Exp(v)
		}
		return -math.Log(math.Exp(x[k]) / s)
	}
	confLoss := 2*logSoftmax([]float64{0, 0, 0}, 1) + logSoftmax([]float64{-2, 1, 0}, 0)
	if want := (locLoss + confLoss) / 2; math.Abs(loss-want) > 1e-6 {
		t.Errorf("loss %v, want %v (location %v, confidence %v, over 2 matches)", loss, want, locLoss, confLoss)
	}
	layertest.Backward(t, l, []*blobF64{top}, []bool{true, true, false, false}, bottom)
	// Prior 2 entered neither loss.
	if d := bottom[1].CPUDiff()[6:9]; !slices.Equal(d, []float64{0, 0, 0}) {
		t.Errorf("prior 2's confidence gradient %v, want none", d)
	}
	if d := bottom[0].CPUDiff()[8:12]; !slices.Equal(d, []float64{0, 0, 0, 0}) {
		t.Errorf("prior 2's location gradient %v, want none", d)
	}
}

func init() {
	fill := func(i int, b *blob.Blob[float64]) {
		if i < 2 {
			layertest.FillGaussian(b, 0, 0.3, uint64(90+i))
			return
		}
		copy(b.MutableCPUData(), multiboxData()[i])
	}
	// Mining picks negatives by their loss, which the finite differences
	// would change: the gradient is checked without mining, with L2 (no
	// kink) and with smooth L1 on the confidences only.
	addGradCases(
		gradCase{name: "MultiBoxLoss/L2", layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE loc_loss_type: L2 mining_type: NONE } loss_weight: 1.5`,
			bottom: multiboxShapes, fill: fill, checkBottoms: []int{0, 1}, threshold: 1e-2},
		gradCase{name: "MultiBoxLoss/confidences", layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE mining_type: NONE }`,
			bottom: multiboxShapes, fill: fill, checkBottoms: []int{1}, threshold: 1e-2},
	)
	addParityCases(layertest.Parity{Layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE neg_pos_ratio: 3 mining_type: MAX_NEGATIVE }`,
		Bottom: multiboxShapes, NoPropagate: []int{2, 3}, Fill: func(i int, b []float64) {
			if i < 2 {
				for k := range b {
					b[k] = 0.3 * math.Sin(float64(5*k+i))
				}
				return
			}
			copy(b, multiboxData()[i])
		}})
}

// TestDetectionEvaluate checks SSD's true and false positives and the
// mean average precision on a hand case of two images.
func TestDetectionEvaluate(t *testing.T) {
	l := layertest.New[float64](t, `type: "DetectionEvaluate" detection_evaluate_param { num_classes: 3 background_label_id: 0 overlap_threshold: 0.5 evaluate_difficult_gt: false }`)
	det, gt := layertest.Blob[float64](t, 1, 1, 5, 7), layertest.Blob[float64](t, 1, 1, 3, 8)
	a, b, c := []float64{0.1, 0.1, 0.4, 0.4}, []float64{0.5, 0.5, 0.9, 0.9}, []float64{0.2, 0.6, 0.4, 0.8}
	copy(gt.MutableCPUData(), slices.Concat(
		[]float64{0, 1, 0}, a, []float64{0}, // image 0: label 1 at A
		[]float64{0, 2, 0}, b, []float64{1}, // image 0: label 2 at B, difficult
		[]float64{1, 1, 0}, c, []float64{0}, // image 1: label 1 at C
	))
	copy(det.MutableCPUData(), slices.Concat(
		[]float64{0, 1, 0.8, 0.1, 0.1, 0.4, 0.38}, // A again: a false positive once A is taken
		[]float64{0, 1, 0.9, 0.11, 0.1, 0.4, 0.4}, // A: true positive
		[]float64{0, 2, 0.7, 0.5, 0.5, 0.9, 0.88}, // B, difficult: neither
		[]float64{1, 1, 0.6, 0.6, 0.1, 0.9, 0.3},  // far from C: false positive
		[]float64{1, 2, 0.5, 0.2, 0.6, 0.4, 0.8},  // no label 2 in image 1: false positive
	))
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{det, gt}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{det, gt}, []*blobF64{top})
	want := []float64{
		-1, 1, 2, -1, -1, -1, 2, 0, -1, -1,
		0, 1, 0.9, 1, 0, 0, 1, 0.8, 0, 1,
		0, 2, 0.7, 0, 0,
		1, 1, 0.6, 0, 1,
		1, 2, 0.5, 0, 1,
	}
	layertest.CheckClose(t, "rows", top.CPUData(), want, 1e-6)
	var e layer.DetectionEval
	rows := make([]float32, len(top.CPUData()))
	for i, v := range top.CPUData() {
		rows[i] = float32(v)
	}
	e.Add(rows)
	// Label 1: precision 1, 1/2, 1/3 at recall 1/2 throughout: AP 0.5
	// (Integral), 6/11 (11 points); label 2 has no positives: AP 0.
	for version, want := range map[string]float64{"Integral": 0.25, "MaxIntegral": 0.25, "11point": 3.0 / 11} {
		got, err := e.MAP(version)
		if err != nil || math.Abs(got-want) > 1e-6 {
			t.Errorf("%s mAP %v (%v), want %v", version, got, err, want)
		}
	}
}

func init() {
	// Upsample's positions: each value of a 2 x 3 plane sent to one of its
	// 2 x 2 cell's four places in the 4 x 6 top, as a pooling mask says.
	mask := func(i int, b *blob.Blob[float64]) {
		if i == 0 {
			layertest.FillGaussian(b, 0, 1, 61)
			return
		}
		x := b.MutableCPUData()
		for k := range x {
			cell := k % 6
			r, c := cell/3, cell%3
			x[k] = float64((2*r+k%2)*6 + 2*c + (k/6)%2)
		}
	}
	addGradCases(
		gradCase{name: "Upsample", layer: `type: "Upsample" upsample_param { scale: 2 }`, bottom: [][]int{{2, 2, 2, 3}, {2, 2, 2, 3}}, fill: mask, firstBottomOnly: true, mode: exhaustive},
		gradCase{name: "Interp/zoom", layer: `type: "Interp" interp_param { zoom_factor: 3 }`, bottom: [][]int{{1, 2, 3, 2}}, mode: exhaustive},
		gradCase{name: "Interp/size-crop", layer: `type: "Interp" interp_param { height: 4 width: 7 pad_beg: -1 pad_end: 0 }`, bottom: [][]int{{2, 1, 4, 5}}, mode: exhaustive},
	)
	addParityCases(
		layertest.Parity{Layer: `type: "Upsample" upsample_param { upsample_h: 4 upsample_w: 6 }`, Bottom: [][]int{{2, 2, 2, 3}, {2, 2, 2, 3}},
			Fill: func(i int, b []float64) {
				for k := range b {
					if i == 0 {
						b[k] = math.Sin(float64(k))
					} else {
						b[k] = float64((k%6/3*2)*6 + k%6%3*2)
					}
				}
			}},
		layertest.Parity{Layer: `type: "Interp" interp_param { zoom_factor: 4 shrink_factor: 2 }`, Bottom: [][]int{{2, 3, 9, 7}}},
		layertest.Parity{Layer: `type: "Interp" interp_param { height: 5 width: 11 pad_beg: -1 pad_end: -2 }`, Bottom: [][]int{{2, 2, 8, 9}}},
	)
}

// TestUpsampleAfterPooling unpools a MAX pooling's output through its mask:
// each maximum returns to its place, everything else is zero.
func TestUpsampleAfterPooling(t *testing.T) {
	pool := layertest.New[float64](t, `type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 }`)
	up := layertest.New[float64](t, `type: "Upsample" upsample_param { scale: 2 }`)
	x := layertest.Blob[float64](t, 1, 1, 4, 4)
	copy(x.MutableCPUData(), []float64{1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 2, 9, 1, 3, 1})
	pooled, mask, out := layertest.Blob[float64](t), layertest.Blob[float64](t), layertest.Blob[float64](t)
	layertest.SetUp(t, pool, []*blobF64{x}, []*blobF64{pooled, mask})
	layertest.Forward(t, pool, []*blobF64{x}, []*blobF64{pooled, mask})
	layertest.SetUp(t, up, []*blobF64{pooled, mask}, []*blobF64{out})
	layertest.Forward(t, up, []*blobF64{pooled, mask}, []*blobF64{out})
	want := []float64{0, 5, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 9, 0, 3, 0}
	if !slices.Equal(out.CPUData(), want) {
		t.Errorf("unpooled %v, want %v", out.CPUData(), want)
	}
}

// TestInterp checks corner-aligned bilinear zooming on a hand case.
func TestInterp(t *testing.T) {
	l := layertest.New[float64](t, `type: "Interp" interp_param { zoom_factor: 2 }`)
	x := layertest.Blob[float64](t, 1, 1, 2, 2)
	copy(x.MutableCPUData(), []float64{0, 1, 2, 3})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blobF64{x}, []*blobF64{top})
	layertest.Forward(t, l, []*blobF64{x}, []*blobF64{top})
	layertest.CheckClose(t, "Interp", top.CPUData(), []float64{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, 1e-12)
	shrink := layertest.New[float64](t, `type: "Interp" interp_param { shrink_factor: 2 }`)
	big := layertest.Blob[float64](t, 1, 1, 5, 7)
	layertest.SetUp(t, shrink, []*blobF64{big}, []*blobF64{top})
	if !slices.Equal(top.Shape(), []int{1, 1, 3, 4}) {
		t.Errorf("shrink 2 of 5 x 7: %v, want 3 x 4", top.Shape())
	}
}

// TestMultiBoxLossDoesNotAllocate: once the shapes are known, a training
// pass (forward and backward) allocates nothing.
func TestMultiBoxLossDoesNotAllocate(t *testing.T) {
	l := layertest.New[float32](t, `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE neg_pos_ratio: 0.5 mining_type: MAX_NEGATIVE }`)
	var bottom []*blob.Blob[float32]
	for i, d := range multiboxData() {
		b := layertest.Blob[float32](t, multiboxShapes[i]...)
		for k, v := range d {
			b.MutableCPUData()[k] = float32(v)
		}
		bottom = append(bottom, b)
	}
	top := []*blob.Blob[float32]{layertest.Blob[float32](t)}
	layertest.SetUp(t, l, bottom, top)
	propagate := []bool{true, true, false, false}
	pass := func() {
		layertest.Forward(t, l, bottom, top)
		layertest.Backward(t, l, top, propagate, bottom)
	}
	pass()
	if n := testing.AllocsPerRun(10, pass); n != 0 {
		t.Errorf("%v allocations per pass", n)
	}
}
