package detection

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	if err := layer.RegisterPython("rpn.proposal_target_layer.ProposalTargetLayer", newProposalTarget[float32], newProposalTarget[float64]); err != nil {
		panic(err)
	}
}

// ProposalTarget is Faster R-CNN's detection training target layer, the
// Python layer rpn.proposal_target_layer.ProposalTargetLayer of
// py-faster-rcnn, written in Go and registered under that name:
//
//	layer { name: "roi-data" type: "Python" bottom: "rpn_rois" bottom: "gt_boxes"
//	  top: "rois" top: "labels" top: "bbox_targets" top: "bbox_inside_weights" top: "bbox_outside_weights"
//	  python_param { module: "rpn.proposal_target_layer" layer: "ProposalTargetLayer" param_str: "'num_classes': 21" } }
//
// The proposals (R x 5: 0, x1, y1, x2, y2), with the ground-truth boxes
// (G x 5: x1, y1, x2, y2, class) added to them, are matched to their
// best-overlapping box; up to 32 foreground regions (overlap at least 0.5)
// and then background ones (overlap in [0, 0.5)), 128 in all, are drawn
// at random. Tops: the regions (N x 5), their classes (N, background 0),
// and per class 4 regression targets (bbox_transform towards the matched
// box, normalized by the means 0 and deviations 0.1, 0.1, 0.2, 0.2 as
// py-faster-rcnn's end-to-end training configures it) with inside and
// outside weights 1 on the region's own class (N x 4·num_classes each).
//
// The numbers are those of py-faster-rcnn's experiments/cfgs/
// faster_rcnn_end2end.yml over its cfg.TRAIN defaults (the only
// configuration that uses this layer); param_str may set them by their
// names in lower case ('batch_size', 'fg_fraction', 'fg_thresh',
// 'bg_thresh_hi', 'bg_thresh_lo', 'bbox_normalize_targets_precomputed',
// 'bbox_normalize_means', 'bbox_normalize_stds').
type proposalTargetLayer[T layer.Float] struct {
	layer.Base[T]
	classes                int
	batch, fgPerImage      int
	fgThresh, bgHi, bgLo   float32
	normalize              bool
	means, stds            [4]float32
	rng                    *rand.Rand
	rois                   [][4]float32 // proposals and ground truth, reused
	assigned               []int
	overlap                []float32
	fgIdx, bgIdx, keep     []int
	regionClass, keptClass []int
}

func newProposalTarget[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &proposalTargetLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	params := parsePyDict(p.GetPythonParam().GetParamStr())
	var err error
	get := pyNumber(params, &err)
	if l.classes = int(get("num_classes", 0)); err != nil {
		return nil, err
	} else if l.classes < 2 {
		return nil, fmt.Errorf("param_str %q must give 'num_classes' (background included), at least 2", p.GetPythonParam().GetParamStr())
	}
	l.batch = int(get("batch_size", 128))
	l.fgPerImage = int(math.RoundToEven(get("fg_fraction", 0.25) * float64(l.batch)))
	l.fgThresh, l.bgHi, l.bgLo = float32(get("fg_thresh", 0.5)), float32(get("bg_thresh_hi", 0.5)), float32(get("bg_thresh_lo", 0))
	l.normalize = get("bbox_normalize_targets_precomputed", 1) != 0
	if err != nil {
		return nil, err
	}
	l.means, l.stds = [4]float32{}, [4]float32{0.1, 0.1, 0.2, 0.2}
	for key, dst := range map[string]*[4]float32{"bbox_normalize_means": &l.means, "bbox_normalize_stds": &l.stds} {
		v, ok, err := params.numbers(key)
		if err != nil {
			return nil, err
		}
		if ok {
			if len(v) != 4 {
				return nil, fmt.Errorf("param_str: %s needs 4 values, got %d", key, len(v))
			}
			for i := range v {
				dst[i] = float32(v[i])
			}
		}
	}
	return l, nil
}

// Type returns "Python", the type its prototxt gives.
func (*proposalTargetLayer[T]) Type() string { return "Python" }

// Counts: proposals and ground truth; regions, labels, targets and the two
// weights.
func (*proposalTargetLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(5)}
}

// LayerSetUp takes the layer's random generator for the sampling.
func (l *proposalTargetLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	l.rng = l.RNG()
	return nil
}

// Reshape checks the bottoms and gives the tops py-faster-rcnn's setup
// shapes; the forward pass sizes them.
func (l *proposalTargetLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if r := bottom[0]; r.NumAxes() != 2 || r.Shape()[1] != 5 {
		return fmt.Errorf("rpn_rois %s must be R x 5 (0, x1, y1, x2, y2)", r.ShapeString())
	}
	if g := bottom[1]; g.NumAxes() != 2 || g.Shape()[1] != 5 {
		return fmt.Errorf("gt_boxes %s must be G x 5 (x1, y1, x2, y2, class)", g.ShapeString())
	}
	return l.shapeTops(top, 1)
}

func (l *proposalTargetLayer[T]) shapeTops(top []*blob.Blob[T], n int) error {
	for i, s := range [][]int{{n, 5}, {n}, {n, 4 * l.classes}, {n, 4 * l.classes}, {n, 4 * l.classes}} {
		if err := top[i].Reshape(s); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU samples the regions and computes their targets.
func (l *proposalTargetLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	props, gt := bottom[0].CPUData(), gtBoxes(bottom[1].CPUData())
	l.rois = l.rois[:0]
	for i := 0; i < len(props); i += 5 {
		if props[i] != 0 {
			return fmt.Errorf("only single item batches are supported: region %d is of image %v", i/5, props[i])
		}
		l.rois = append(l.rois, [4]float32{float32(props[i+1]), float32(props[i+2]), float32(props[i+3]), float32(props[i+4])})
	}
	for _, g := range gt {
		l.rois = append(l.rois, g.box)
	}
	l.match(gt)
	l.sample()
	n := len(l.keep)
	if err := l.shapeTops(top, n); err != nil {
		return err
	}
	rois, labels := top[0].MutableCPUData(), top[1].MutableCPUData()
	targets, inW, outW := top[2].MutableCPUData(), top[3].MutableCPUData(), top[4].MutableCPUData()
	clear(targets)
	clear(inW)
	clear(outW)
	k := 4 * l.classes
	for i, r := range l.keep {
		b := l.rois[r]
		copy(rois[5*i:5*i+5], []T{0, T(b[0]), T(b[1]), T(b[2]), T(b[3])})
		c := l.keptClass[i]
		labels[i] = T(c)
		if c <= 0 || c >= l.classes {
			if c >= l.classes {
				return fmt.Errorf("gt_boxes class %d is not below num_classes %d", c, l.classes)
			}
			continue
		}
		d := bboxTransform(b, gt[l.assigned[r]].box)
		for j := range 4 {
			if l.normalize {
				d[j] = (d[j] - l.means[j]) / l.stds[j]
			}
			targets[i*k+4*c+j] = T(d[j])
			inW[i*k+4*c+j], outW[i*k+4*c+j] = 1, 1
		}
	}
	return nil
}

// match finds each region's best box and overlap.
func (l *proposalTargetLayer[T]) match(gt []gtBox) {
	l.assigned, l.overlap = kit.Grow(l.assigned, len(l.rois)), kit.Grow(l.overlap, len(l.rois))
	for i, r := range l.rois {
		l.assigned[i], l.overlap[i] = 0, 0
		for g := range gt {
			if o := pixelIoU(r, gt[g].box); o > l.overlap[i] {
				l.assigned[i], l.overlap[i] = g, o
			}
		}
	}
	l.gtClasses(gt)
}

// gtClasses records each region's class, that of its best box (0 without
// boxes).
func (l *proposalTargetLayer[T]) gtClasses(gt []gtBox) {
	l.regionClass = kit.Grow(l.regionClass, len(l.rois))
	for i := range l.rois {
		l.regionClass[i] = 0
		if len(gt) > 0 {
			l.regionClass[i] = int(gt[l.assigned[i]].class)
		}
	}
}

// sample draws the foreground and background regions (numpy's choice
// without replacement), foreground first, and sets l.keep and
// l.keptClass, the kept regions' classes (background 0).
func (l *proposalTargetLayer[T]) sample() {
	l.fgIdx, l.bgIdx = l.fgIdx[:0], l.bgIdx[:0]
	for i, o := range l.overlap {
		switch {
		case o >= l.fgThresh:
			l.fgIdx = append(l.fgIdx, i)
		case o < l.bgHi && o >= l.bgLo:
			l.bgIdx = append(l.bgIdx, i)
		}
	}
	nfg := min(l.fgPerImage, len(l.fgIdx))
	l.rng.Shuffle(len(l.fgIdx), func(i, j int) { l.fgIdx[i], l.fgIdx[j] = l.fgIdx[j], l.fgIdx[i] })
	nbg := min(l.batch-nfg, len(l.bgIdx))
	l.rng.Shuffle(len(l.bgIdx), func(i, j int) { l.bgIdx[i], l.bgIdx[j] = l.bgIdx[j], l.bgIdx[i] })
	l.keep = append(append(l.keep[:0], l.fgIdx[:nfg]...), l.bgIdx[:max(nbg, 0)]...)
	l.keptClass = kit.Grow(l.keptClass, len(l.keep))
	for i, r := range l.keep {
		l.keptClass[i] = 0
		if i < nfg {
			l.keptClass[i] = l.regionClass[r]
		}
	}
}

// BackwardCPU does nothing: targets get no gradient.
func (*proposalTargetLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
