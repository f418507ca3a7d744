package detection

import (
	"fmt"
	"math/rand/v2"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	if err := layer.RegisterPython("rpn.anchor_target_layer.AnchorTargetLayer", newAnchorTarget[float32], newAnchorTarget[float64]); err != nil {
		panic(err)
	}
}

// AnchorTarget is Faster R-CNN's RPN training target layer, the Python
// layer rpn.anchor_target_layer.AnchorTargetLayer of py-faster-rcnn,
// written in Go and registered under that name:
//
//	layer { name: "rpn-data" type: "Python" bottom: "rpn_cls_score" bottom: "gt_boxes" bottom: "im_info" bottom: "data"
//	  top: "rpn_labels" top: "rpn_bbox_targets" top: "rpn_bbox_inside_weights" top: "rpn_bbox_outside_weights"
//	  python_param { module: "rpn.anchor_target_layer" layer: "AnchorTargetLayer" param_str: "'feat_stride': 16" } }
//
// It places the anchors as the proposal layer does (every feat_stride
// pixels over rpn_cls_score's H x W), keeps those inside the image
// (allowed_border pixels of slack, default 0), and labels them against the
// ground-truth boxes (G x 5: x1, y1, x2, y2, class, in pixels): 1 for an
// anchor that is some box's best match (ties included) or overlaps one by
// at least 0.7, 0 under 0.3, -1 (ignored) otherwise; then at most 128
// positives and 256 in all are kept, chosen at random, the rest set to -1.
// Regression targets (py-faster-rcnn's bbox_transform towards each
// anchor's best box) get inside weights 1 on positives and outside
// weights 1/(number of labelled anchors) on positives and negatives.
// Tops, in py-faster-rcnn's layouts: labels 1 x 1 x A·H x W; targets and
// both weights 1 x 4A x H x W.
//
// The numbers are py-faster-rcnn's cfg.TRAIN defaults; param_str may set
// them by their names in lower case ('rpn_positive_overlap',
// 'rpn_negative_overlap', 'rpn_fg_fraction', 'rpn_batchsize',
// 'rpn_positive_weight', 'rpn_clobber_positives'), which py-faster-rcnn
// reads from its configuration file instead.
type anchorTargetLayer[T layer.Float] struct {
	layer.Base[T]
	featStride                 float64
	anchors                    [][4]float32
	allowedBorder              float32
	posOverlap, negOverlap     float32
	fgFraction, positiveWeight float32
	batchSize                  int
	clobber                    bool
	rng                        *rand.Rand
}

func newAnchorTarget[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &anchorTargetLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	params := parsePyDict(p.GetPythonParam().GetParamStr())
	var err error
	if l.featStride, l.anchors, err = rpnAnchors(p, params); err != nil {
		return nil, err
	}
	get := pyNumber(params, &err)
	l.allowedBorder = float32(get("allowed_border", 0))
	l.posOverlap, l.negOverlap = float32(get("rpn_positive_overlap", 0.7)), float32(get("rpn_negative_overlap", 0.3))
	l.fgFraction, l.batchSize = float32(get("rpn_fg_fraction", 0.5)), int(get("rpn_batchsize", 256))
	l.positiveWeight, l.clobber = float32(get("rpn_positive_weight", -1)), get("rpn_clobber_positives", 0) != 0
	if err != nil {
		return nil, err
	}
	if w := l.positiveWeight; w >= 0 && (w <= 0 || w >= 1) {
		return nil, fmt.Errorf("param_str: rpn_positive_weight %g must be negative (uniform) or between 0 and 1", w)
	}
	return l, nil
}

// rpnAnchors reads feat_stride and scales from a py-faster-rcnn layer's
// param_str and makes its anchors. The stride is a number as YAML reads it
// there, not only an integer: py-faster-rcnn multiplies the map's
// positions by it (np.arange(width) * feat_stride) in float64, so 0.5
// places anchors every half pixel of a map upsampled twice; truncating it
// to an int made that 0, every anchor at the origin.
func rpnAnchors(p *caffepb.LayerParameter, params pyDict) (float64, [][4]float32, error) {
	stride, ok, err := params.numbers("feat_stride")
	if err != nil {
		return 0, nil, err
	}
	if !ok || len(stride) != 1 || stride[0] <= 0 {
		return 0, nil, fmt.Errorf("param_str %q must give a positive 'feat_stride'", p.GetPythonParam().GetParamStr())
	}
	scales := []float64{8, 16, 32}
	s, ok, err := params.numbers("scales")
	if err != nil {
		return 0, nil, err
	}
	if ok {
		if len(s) == 0 {
			return 0, nil, fmt.Errorf("param_str %q: 'scales' is empty", p.GetPythonParam().GetParamStr())
		}
		scales = s
	}
	return stride[0], generateAnchors(16, []float64{0.5, 1, 2}, scales), nil
}

// shiftAnchor moves an anchor by (sx, sy) in float64 and rounds the
// result to float32 once, as py-faster-rcnn's float64 anchors are rounded
// when they meet Caffe's float32 blobs.
func shiftAnchor(a [4]float32, sx, sy float64) [4]float32 {
	return [4]float32{float32(float64(a[0]) + sx), float32(float64(a[1]) + sy), float32(float64(a[2]) + sx), float32(float64(a[3]) + sy)}
}

// pyNumber returns a getter of a param_str's single numbers with defaults
// (True and False read as 1 and 0). A key whose value is not a number sets
// *err, the first such.
func pyNumber(params pyDict, err *error) func(key string, def float64) float64 {
	return func(key string, def float64) float64 {
		v, ok, e := params.numbers(key)
		if e != nil && *err == nil {
			*err = e
		}
		if ok && len(v) == 1 {
			return v[0]
		}
		return def
	}
}

// Type returns "Python", the type its prototxt gives.
func (*anchorTargetLayer[T]) Type() string { return "Python" }

// Counts: scores (for the map size), ground truth, im_info and, unused,
// the image; labels, targets and the two weights.
func (*anchorTargetLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Between(3, 4), Top: layer.Exactly(4)}
}

// LayerSetUp takes the layer's random generator for the sampling.
func (l *anchorTargetLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	l.rng = l.RNG()
	return nil
}

// Reshape sizes the tops for the score map.
func (l *anchorTargetLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	s := bottom[0].Shape()
	if len(s) != 4 || s[0] != 1 {
		return fmt.Errorf("only single item batches are supported: scores %s", bottom[0].ShapeString())
	}
	if g := bottom[1]; g.NumAxes() != 2 || g.Shape()[1] != 5 {
		return fmt.Errorf("gt_boxes %s must be G x 5 (x1, y1, x2, y2, class)", g.ShapeString())
	}
	if bottom[2].Count() < 3 {
		return fmt.Errorf("im_info %s must hold height, width and scale", bottom[2].ShapeString())
	}
	a, h, w := len(l.anchors), s[2], s[3]
	if err := top[0].Reshape([]int{1, 1, a * h, w}); err != nil {
		return err
	}
	for _, t := range top[1:] {
		if err := t.Reshape([]int{1, 4 * a, h, w}); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU labels the anchors and computes their targets.
func (l *anchorTargetLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a, hgt, wid := len(l.anchors), bottom[0].Shape()[2], bottom[0].Shape()[3]
	gt := gtBoxes(bottom[1].CPUData())
	info := bottom[2].CPUData()
	imH, imW := float32(info[0]), float32(info[1])
	// The anchors inside the image, in py-faster-rcnn's order (position,
	// then anchor).
	var inside []int
	var boxes [][4]float32
	for k := range hgt * wid {
		// Anchor plus shift in float64, rounded once, as py-faster-rcnn's
		// all_anchors (exact in float32 too for integer strides).
		sx, sy := float64(k%wid)*l.featStride, float64(k/wid)*l.featStride
		for j, anc := range l.anchors {
			b := shiftAnchor(anc, sx, sy)
			if b[0] >= -l.allowedBorder && b[1] >= -l.allowedBorder && b[2] < imW+l.allowedBorder && b[3] < imH+l.allowedBorder {
				inside = append(inside, k*a+j)
				boxes = append(boxes, b)
			}
		}
	}
	labels, best := l.label(boxes, gt)
	l.subsample(labels, 1, int(l.fgFraction*float32(l.batchSize)))
	positives := 0
	for _, v := range labels {
		if v == 1 {
			positives++
		}
	}
	l.subsample(labels, 0, l.batchSize-positives)
	posW, negW := l.exampleWeights(labels)

	for _, t := range top {
		clear(t.MutableCPUData())
	}
	lab, tgt, inW, outW := top[0].MutableCPUData(), top[1].MutableCPUData(), top[2].MutableCPUData(), top[3].MutableCPUData()
	for i := range lab {
		lab[i] = -1
	}
	plane := hgt * wid
	for i, idx := range inside {
		k, j := idx/a, idx%a
		lab[j*plane+k] = T(labels[i])
		var d [4]float32
		if len(gt) > 0 {
			d = bboxTransform(boxes[i], gt[best[i]].box)
		}
		for c := range 4 {
			at := (4*j+c)*plane + k
			tgt[at] = T(d[c])
			switch labels[i] {
			case 1:
				inW[at], outW[at] = 1, T(posW)
			case 0:
				outW[at] = T(negW)
			}
		}
	}
	return nil
}

// gtBox is a ground-truth box and its class.
type gtBox struct {
	box   [4]float32
	class float32
}

func gtBoxes[T layer.Float](v []T) []gtBox {
	out := make([]gtBox, len(v)/5)
	for i := range out {
		r := v[5*i:]
		out[i] = gtBox{[4]float32{float32(r[0]), float32(r[1]), float32(r[2]), float32(r[3])}, float32(r[4])}
	}
	return out
}

// label gives each anchor 1, 0 or -1 as py-faster-rcnn does, and returns
// with the labels each anchor's best-matching box.
func (l *anchorTargetLayer[T]) label(boxes [][4]float32, gt []gtBox) (labels []int8, best []int) {
	labels, best = make([]int8, len(boxes)), make([]int, len(boxes))
	maxOv := make([]float32, len(boxes))
	gtMax := make([]float32, len(gt))
	for i, b := range boxes {
		maxOv[i] = -1
		for g := range gt {
			o := pixelIoU(b, gt[g].box)
			if o > maxOv[i] {
				maxOv[i], best[i] = o, g
			}
			gtMax[g] = max(gtMax[g], o)
		}
		labels[i] = -1
		if len(gt) == 0 {
			maxOv[i] = 0
		}
	}
	negatives := func() {
		for i := range labels {
			if maxOv[i] < l.negOverlap {
				labels[i] = 0
			}
		}
	}
	if !l.clobber {
		negatives()
	}
	for i, b := range boxes {
		// Each box's best anchors (every anchor that ties its best
		// overlap, as numpy's overlaps == gt_max_overlaps finds them).
		for g := range gt {
			if pixelIoU(b, gt[g].box) == gtMax[g] {
				labels[i] = 1
				break
			}
		}
		if maxOv[i] >= l.posOverlap {
			labels[i] = 1
		}
	}
	if l.clobber {
		negatives()
	}
	return labels, best
}

// subsample keeps at most n of the anchors labelled v, chosen at random
// (numpy's choice without replacement); the others become -1.
func (l *anchorTargetLayer[T]) subsample(labels []int8, v int8, n int) {
	var idx []int
	for i, x := range labels {
		if x == v {
			idx = append(idx, i)
		}
	}
	if len(idx) <= n {
		return
	}
	l.rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	for _, i := range idx[max(n, 0):] {
		labels[i] = -1
	}
}

// exampleWeights are the outside weights of positives and negatives: 1
// over the labelled anchors, or rpn_positive_weight split over the
// positives and the rest over the negatives.
func (l *anchorTargetLayer[T]) exampleWeights(labels []int8) (pos, neg float32) {
	var np, nn int
	for _, v := range labels {
		switch v {
		case 1:
			np++
		case 0:
			nn++
		}
	}
	if l.positiveWeight < 0 {
		if np+nn == 0 {
			return 0, 0
		}
		w := 1 / float32(np+nn)
		return w, w
	}
	if np > 0 {
		pos = l.positiveWeight / float32(np)
	}
	if nn > 0 {
		neg = (1 - l.positiveWeight) / float32(nn)
	}
	return pos, neg
}

// BackwardCPU does nothing: targets get no gradient.
func (*anchorTargetLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
