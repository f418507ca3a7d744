package detection_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer/detection"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddParity(
		layertest.Parity{Layer: `type: "PriorBox" prior_box_param { min_size: 10 max_size: 20 aspect_ratio: 3 }`, Bottom: [][]int{{1, 8, 3, 3}, {1, 3, 30, 30}}},
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
	cases.AddGrad(layertest.GradCase{Name: "ROIPooling", Layer: `type: "ROIPooling" roi_pooling_param { pooled_h: 3 pooled_w: 2 spatial_scale: 0.5 }`,
		Bottom: [][]int{{2, 2, 6, 8}, {4, 5}}, Fill: rois, FirstBottomOnly: true, Mode: layertest.Exhaustive})
}

// TestPriorBox checks SSD's boxes against values computed here from the
// formula: a 2 x 2 map of a 300 x 300 image, min_size 30.7 (used as 30, as
// SSD truncates it), max_size 60, aspect ratio 2 flipped, four variances.
func TestPriorBox(t *testing.T) {
	l := layertest.New[float64](t, `type: "PriorBox" prior_box_param { min_size: 30.7 max_size: 60 aspect_ratio: 2 flip: true
		variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 }`)
	fmap, img := layertest.Blob[float64](t, 1, 8, 2, 2), layertest.Blob[float64](t, 1, 3, 300, 300)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
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
	layertest.SetUp(t, clipped, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
	layertest.Forward(t, clipped, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
	// First box: centre (0, 0), side 200: clipped to (0, 0, 1/3, 1/3).
	layertest.CheckClose(t, "clipped", top.CPUData()[:4], []float64{0, 0, 100.0 / 300, 100.0 / 300}, 1e-12)
	for _, bad := range []string{`prior_box_param { }`, `prior_box_param { min_size: 30 max_size: 20 }`,
		`prior_box_param { min_size: 30 variance: 0.1 variance: 0.2 }`, `prior_box_param { min_size: 30 step: 8 step_h: 8 }`} {
		if _, err := layer.New[float64](layertest.Param(t, `type: "PriorBox" `+bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// PriorBox writes its top once per shape: a pass at another map or image
// size, or after the top was written, writes the boxes again (those of a
// layer that never wrote before).
func TestPriorBoxRecomputed(t *testing.T) {
	const param = `type: "PriorBox" prior_box_param { min_size: 30 max_size: 60 aspect_ratio: 2 flip: true variance: 0.1 }`
	fresh := func(fmap, img *blob.Blob[float64]) []float64 {
		l := layertest.New[float64](t, param)
		top := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
		layertest.Forward(t, l, []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{top})
		return slices.Clone(top.CPUData())
	}
	l := layertest.New[float64](t, param)
	fmap, img := layertest.Blob[float64](t, 1, 8, 2, 2), layertest.Blob[float64](t, 1, 3, 300, 300)
	bottom, top := []*blob.Blob[float64]{fmap, img}, []*blob.Blob[float64]{layertest.Blob[float64](t)}
	layertest.SetUp(t, l, bottom, top)
	check := func(what string) {
		t.Helper()
		if err := l.Reshape(bottom, top); err != nil {
			t.Fatal(err)
		}
		layertest.Forward(t, l, bottom, top)
		if want := fresh(fmap, img); !slices.Equal(top[0].CPUData(), want) {
			t.Errorf("%s: the boxes differ from a fresh layer's", what)
		}
	}
	check("first pass")
	check("same shapes")
	for _, s := range []struct {
		what string
		b    *blob.Blob[float64]
		dims []int
	}{
		{"map 3 x 2", fmap, []int{1, 8, 3, 2}},
		{"map 1 x 1", fmap, []int{1, 8, 1, 1}},
		{"image 200 x 300", img, []int{1, 3, 200, 300}},
	} {
		if err := s.b.Reshape(s.dims); err != nil {
			t.Fatal(err)
		}
		check(s.what)
	}
	clear(top[0].MutableCPUData())
	check("top written")
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
	layertest.SetUp(t, l, []*blob.Blob[float64]{fmap, rois}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{fmap, rois}, []*blob.Blob[float64]{top})
	// Region 1 is 3 x 3, bins of 1.5: rows [1, 3) and [2, 4), columns likewise.
	// Region 2 is 2 x 2, bins of one element each.
	want := []float64{10, 11, 14, 15, 0, 1, 4, 5}
	if got := top.CPUData(); !slices.Equal(got, want) {
		t.Errorf("ROIPooling: %v, want %v", got, want)
	}
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
	bottom := []*blob.Blob[float64]{loc, conf, prior}
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
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
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	cx, w := 0.75+0.1*0.3, 0.6
	layertest.CheckClose(t, "decoded C", top.CPUData()[10:14], []float64{cx - w/2, 0.6, cx + w/2, 0.9}, 1e-6)

	// Nothing above the threshold: one row of -1 per image, image index first.
	copy(conf.MutableCPUData(), []float64{1, 0.1, 0.1, 1, 0.1, 0.1, 1, 0.1, 0.1})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	if got := top.CPUData(); !slices.Equal(got, []float64{0, -1, -1, -1, -1, -1, -1}) {
		t.Errorf("no detections: %v", got)
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
	bottom, top := []*blob.Blob[float64]{prob, deltas, info}, []*blob.Blob[float64]{rois, scores}
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
	bottom, top := []*blob.Blob[float64]{prob, deltas, info}, []*blob.Blob[float64]{rois}
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

// TestMultiBoxLoss checks matching, encoding, mining and normalization on
// the hand case against values worked out here: priors 0 (bipartite) and 1
// (overlap 0.6 >= 0.5) match; with neg_pos_ratio 0.5 one negative is
// mined, prior 3, whose background scores worst.
func TestMultiBoxLoss(t *testing.T) {
	l := layertest.New[float64](t, `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 overlap_threshold: 0.5
		code_type: CENTER_SIZE neg_pos_ratio: 0.5 neg_overlap: 0.5 mining_type: MAX_NEGATIVE match_type: PER_PREDICTION }`)
	bottom := multiboxBottoms(t)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{top})
	loss := layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
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
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{true, true, false, false}, bottom)
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
	cases.AddGrad(
		layertest.GradCase{Name: "MultiBoxLoss/L2", Layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE loc_loss_type: L2 mining_type: NONE } loss_weight: 1.5`,
			Bottom: multiboxShapes, Fill: fill, CheckBottoms: []int{0, 1}, Threshold: 1e-2},
		layertest.GradCase{Name: "MultiBoxLoss/confidences", Layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE mining_type: NONE }`,
			Bottom: multiboxShapes, Fill: fill, CheckBottoms: []int{1}, Threshold: 1e-2},
	)
	cases.AddParity(layertest.Parity{Layer: `type: "MultiBoxLoss" multibox_loss_param { num_classes: 3 code_type: CENTER_SIZE neg_pos_ratio: 3 mining_type: MAX_NEGATIVE }`,
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
	layertest.SetUp(t, l, []*blob.Blob[float64]{det, gt}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{det, gt}, []*blob.Blob[float64]{top})
	want := []float64{
		-1, 1, 2, -1, -1, -1, 2, 0, -1, -1,
		0, 1, 0.9, 1, 0, 0, 1, 0.8, 0, 1,
		0, 2, 0.7, 0, 0,
		1, 1, 0.6, 0, 1,
		1, 2, 0.5, 0, 1,
	}
	layertest.CheckClose(t, "rows", top.CPUData(), want, 1e-6)
	var e detection.DetectionEval
	rows := make([]float32, len(top.CPUData()))
	for i, v := range top.CPUData() {
		rows[i] = float32(v)
	}
	if err := e.Add(top.Shape(), rows); err != nil {
		t.Fatal(err)
	}
	if err := e.Add([]int{2, 7}, rows[:14]); err == nil || !strings.Contains(err.Error(), "rows of 5") {
		t.Errorf("Add of rows of 7: err = %v, want one about rows of 5", err)
	}
	// Label 1: precision 1, 1/2, 1/3 at recall 1/2 throughout: AP 0.5
	// (Integral), 6/11 (11 points); label 2 has no positives: AP 0.
	for version, want := range map[string]float64{"Integral": 0.25, "MaxIntegral": 0.25, "11point": 3.0 / 11} {
		got, err := e.MAP(version)
		if err != nil || math.Abs(got-want) > 1e-6 {
			t.Errorf("%s mAP %v (%v), want %v", version, got, err, want)
		}
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

func multiboxBottoms(t *testing.T) []*blob.Blob[float64] {
	var out []*blob.Blob[float64]
	for i, d := range multiboxData() {
		b := layertest.Blob[float64](t, multiboxShapes[i]...)
		copy(b.MutableCPUData(), d)
		out = append(out, b)
	}
	return out
}

// TestProposalAnchors checks py-faster-rcnn's nine default anchors, the
// values its generate_anchors.py documents.
func TestProposalAnchors(t *testing.T) {
	want := [][4]float32{
		{-84, -40, 99, 55}, {-176, -88, 191, 103}, {-360, -184, 375, 199},
		{-56, -56, 71, 71}, {-120, -120, 135, 135}, {-248, -248, 263, 263},
		{-36, -80, 51, 95}, {-80, -168, 95, 183}, {-168, -344, 183, 359},
	}
	if got := detection.ProposalAnchors(); !slices.Equal(got, want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}

// TestProposalYAMLTaggedScales: py-faster-rcnn's COCO nets give the
// scales as a YAML-tagged tuple, one item a line, as yaml.load reads them;
// the layer then makes 12 anchors (3 ratios x 4 scales) and takes the
// 24-channel scores those nets feed it. A value that is not numbers is an
// error naming its key, never the default anchors.
func TestProposalYAMLTaggedScales(t *testing.T) {
	for _, ps := range []string{
		`'feat_stride': 16 \n'scales': !!python/tuple [4, 8, 16, 32]`,
		`feat_stride: 16\nscales: [4, 8, 16, 32]`, // YAML's unquoted keys
		`{'feat_stride': 16, 'scales': (4, 8, 16, 32)}`,
	} {
		l := layertest.New[float64](t, `type: "Python" phase: TEST python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "`+ps+`" }`)
		prob, deltas, info := layertest.Blob[float64](t, 1, 24, 2, 2), layertest.Blob[float64](t, 1, 48, 2, 2), layertest.Blob[float64](t, 1, 3)
		copy(info.MutableCPUData(), []float64{64, 64, 1})
		prob.MutableCPUData()[12*4] = 0.9 // a foreground score, so one proposal survives
		rois := layertest.Blob[float64](t)
		bottom, top := []*blob.Blob[float64]{prob, deltas, info}, []*blob.Blob[float64]{rois}
		layertest.SetUp(t, l, bottom, top) // fails for any anchor count but 12
		layertest.Forward(t, l, bottom, top)
		if rois.Shape()[1] != 5 {
			t.Errorf("%s: rois %s", ps, rois.ShapeString())
		}
		// The same scores sized for the 9 default anchors are refused.
		if err := layer.SetUp(l, []*blob.Blob[float64]{layertest.Blob[float64](t, 1, 18, 2, 2), layertest.Blob[float64](t, 1, 36, 2, 2), info}, top); err == nil {
			t.Errorf("%s: 9-anchor scores accepted by a 12-anchor layer", ps)
		}
	}
	for _, ps := range []string{`'feat_stride': 16, 'scales': !!python/object:foo.Bar {}`, `'feat_stride': 16, 'scales': 'big'`} {
		p := layertest.Param(t, `type: "Python" python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" }`)
		p.PythonParam.ParamStr = &ps
		if _, err := layer.New[float32](p); err == nil || !strings.Contains(err.Error(), "scales") {
			t.Errorf("%s: err = %v, want one naming scales", ps, err)
		}
	}
	p := layertest.Param(t, `type: "Python" python_param { module: "rpn.anchor_target_layer" layer: "AnchorTargetLayer" param_str: "'feat_stride': 16\n'scales': !!python/tuple [4, 8, 16, 32]\n'rpn_clobber_positives': True" }`)
	if _, err := layer.New[float32](p); err != nil {
		t.Errorf("anchor target with tagged scales: %v", err)
	}
}

// DetectionOutput suppresses its classes on all cores when they are many
// (here 21 classes of 2 images of 1,000 priors, location per class and
// shared): the detections are those of one core, row for row.
func TestDetectionOutputOnCores(t *testing.T) {
	for _, share := range []bool{true, false} {
		text := `type: "DetectionOutput" detection_output_param { num_classes: 21 code_type: CENTER_SIZE
			nms_param { nms_threshold: 0.45 top_k: 50 } confidence_threshold: 0.02 keep_top_k: 100 share_location: ` + map[bool]string{true: "true", false: "false"}[share] + ` }`
		locClasses := 1
		if !share {
			locClasses = 21
		}
		const num, priors = 2, 1000
		run := func(procs int) []float32 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			r := rand.New(rand.NewPCG(5, 6))
			l := layertest.New[float32](t, text)
			loc, conf, prior := layertest.Blob[float32](t, num, priors*4*locClasses), layertest.Blob[float32](t, num, priors*21), layertest.Blob[float32](t, 1, 2, priors*4)
			for i := range loc.MutableCPUData() {
				loc.MutableCPUData()[i] = float32(r.NormFloat64() * 0.5)
			}
			for i := range conf.MutableCPUData() {
				conf.MutableCPUData()[i] = float32(r.Float64() * 0.2)
			}
			p := prior.MutableCPUData()
			for i := range priors {
				x, y, s := r.Float64()*0.8, r.Float64()*0.8, 0.05+r.Float64()*0.15
				copy(p[4*i:], []float32{float32(x), float32(y), float32(x + s), float32(y + s)})
				copy(p[4*priors+4*i:], []float32{0.1, 0.1, 0.2, 0.2})
			}
			top := layertest.Blob[float32](t)
			bottom := []*blob.Blob[float32]{loc, conf, prior}
			layertest.SetUp(t, l, bottom, []*blob.Blob[float32]{top})
			layertest.Forward(t, l, bottom, []*blob.Blob[float32]{top})
			return slices.Clone(top.CPUData())
		}
		one, all := run(1), run(4)
		if len(one) < 7*num*50 || !slices.Equal(one, all) {
			t.Errorf("share_location %v: %d values on one core, %d on four, equal %v", share, len(one), len(all), slices.Equal(one, all))
		}
	}
}
