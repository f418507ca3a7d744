package detection

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "MultiBoxLoss",
		New32: newMultiBoxLoss[float32], New64: newMultiBoxLoss[float64],
		ONNX: layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// MultiBoxLoss is SSD's training loss (weiliu89/caffe;
// multibox_loss_param). Bottoms: the location predictions (N x priors*4),
// the class confidences before softmax (N x priors*classes), PriorBox's
// output and the ground truth (1 x 1 x G x 8 rows of image, label, instance,
// xmin, ymin, xmax, ymax, difficult; image -1 for none).
//
// Each image's priors are matched to its boxes as SSD does: every box
// first takes the prior that overlaps it most (bipartite, greedily by the
// largest overlap left), then with PER_PREDICTION every other prior takes
// the box it overlaps most if by overlap_threshold or more. The location
// loss (smooth L1, or L2) compares the matched priors' predictions with the
// boxes encoded against the priors (code_type, the priors' variances); the
// confidence loss (softmax) takes the matched priors with their boxes'
// labels and, with MAX_NEGATIVE mining, the unmatched priors overlapping no
// box by neg_overlap or more that the background fits worst, neg_pos_ratio
// of them per positive (without mining, every prior). The loss is
// loc_weight * location + confidence, divided by the normalizer
// (loss_param.normalization: VALID, the default, is the number of
// matches).
//
// Supported as in SSD's published nets: shared locations, matching on the
// priors, SMOOTH_L1 or L2, SOFTMAX, mining NONE or MAX_NEGATIVE without
// NMS; other settings are errors naming them.
type multiBoxLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	p                       *caffepb.MultiBoxLossParameter
	classes, background     int
	priors, num             int
	normalization           caffepb.LossParameter_NormalizationMode
	locOn, confOn           bool    // the layer's propagate_down for locations and confidences
	matches                 [][]int // per image and prior: the matched box, or -1 (or -2)
	numMatches, numNegative int
	normalizer              T
	locDiff                 []T // per match: 4 gradients of the location loss
	confRows                []confRow

	// Buffers kept between passes, so that a training iteration allocates
	// nothing here once the shapes are known.
	priorBoxes []normBox
	best       [][]float32 // per image and prior: the largest overlap
	overlap    []float32   // priors x boxes of the image being matched
	touched    []int       // the priors overlapping some box
	pool       []bool
	gtBoxes    [][]normBox
	gtLabels   [][]int
	prob       []T
	eligible   []lossIndex[T]
	chosen     []int
}

// lossIndex is a negative's background loss and its prior.
type lossIndex[T layer.Float] struct {
	loss  T
	prior int
}

// confRow is one prediction in the confidence loss: image, prior and the
// label it should have.
type confRow struct{ image, prior, label int }

func newMultiBoxLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &multiBoxLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	mp := p.GetMultiboxLossParam()
	if mp == nil || mp.NumClasses == nil || mp.GetNumClasses() < 1 {
		return nil, errors.New("multibox_loss_param: must provide num_classes (at least 1)")
	}
	l.p, l.classes, l.background = mp, int(mp.GetNumClasses()), int(mp.GetBackgroundLabelId())
	switch {
	case !mp.GetShareLocation():
		return nil, errors.New("multibox_loss_param: share_location: false is not supported")
	case !mp.GetUsePriorForMatching():
		return nil, errors.New("multibox_loss_param: use_prior_for_matching: false is not supported")
	case mp.GetConfLossType() != caffepb.MultiBoxLossParameter_SOFTMAX:
		return nil, fmt.Errorf("multibox_loss_param: conf_loss_type %v is not supported (SOFTMAX is)", mp.GetConfLossType())
	case mp.GetMiningType() == caffepb.MultiBoxLossParameter_HARD_EXAMPLE:
		return nil, errors.New("multibox_loss_param: mining_type HARD_EXAMPLE is not supported (MAX_NEGATIVE and NONE are)")
	case mp.NmsParam != nil && mp.GetNmsParam().GetNmsThreshold() > 0 && mp.GetMiningType() != caffepb.MultiBoxLossParameter_NONE:
		return nil, errors.New("multibox_loss_param: mining with nms_param is not supported")
	case mp.GetMapObjectToAgnostic():
		return nil, errors.New("multibox_loss_param: map_object_to_agnostic is not supported")
	case l.background < 0 || l.background >= l.classes:
		return nil, fmt.Errorf("background_label_id %d should be within [0, %d) for softmax", l.background, l.classes)
	}
	if mp.DoNegMining != nil && mp.GetDoNegMining() != (mp.GetMiningType() != caffepb.MultiBoxLossParameter_NONE) {
		return nil, errors.New("multibox_loss_param: do_neg_mining (deprecated) contradicts mining_type")
	}
	lp := p.GetLossParam()
	l.normalization = lp.GetNormalization()
	if lp != nil && lp.Normalization == nil && lp.Normalize != nil {
		l.normalization = caffepb.LossParameter_BATCH_SIZE
		if lp.GetNormalize() {
			l.normalization = caffepb.LossParameter_VALID
		}
	}
	l.locOn, l.confOn = true, true
	if pd := p.GetPropagateDown(); len(pd) >= 2 {
		l.locOn, l.confOn = pd[0], pd[1]
	}
	return l, nil
}

// Type returns "MultiBoxLoss".
func (*multiBoxLossLayer[T]) Type() string { return "MultiBoxLoss" }

// Counts: locations, confidences, priors, ground truth.
func (*multiBoxLossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(4), Top: layer.Exactly(1), AutoTop: true}
}

// AllowForceBackward allows the predictions only.
func (*multiBoxLossLayer[T]) AllowForceBackward(i int) bool { return i < 2 }

// LayerSetUp has nothing more to set up.
func (*multiBoxLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the bottoms against each other.
func (l *multiBoxLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	loc, conf, prior, gt := bottom[0], bottom[1], bottom[2], bottom[3]
	if prior.NumAxes() < 3 || prior.Shape()[1] != 2 {
		return fmt.Errorf("priors %s must be 1 x 2 x (4 * priors), as PriorBox writes", prior.ShapeString())
	}
	l.priors, l.num = prior.CountFrom(2)/4, loc.Shape()[0]
	if loc.CountFrom(1) != 4*l.priors {
		return fmt.Errorf("locations %s must hold 4 values for each of %d priors", loc.ShapeString(), l.priors)
	}
	if conf.Shape()[0] != l.num || conf.CountFrom(1) != l.classes*l.priors {
		return fmt.Errorf("confidences %s must be %d x (%d priors x %d classes)", conf.ShapeString(), l.num, l.priors, l.classes)
	}
	if gt.Count()%8 != 0 {
		return fmt.Errorf("ground truth %s must hold rows of 8 values", gt.ShapeString())
	}
	return top[0].Reshape(kit.ScalarShape())
}

// groundTruth reads the boxes of each image (difficult ones unless
// use_difficult_gt) with their labels.
func (l *multiBoxLossLayer[T]) groundTruth(gt []float32) ([][]normBox, [][]int, error) {
	l.gtBoxes, l.gtLabels = kit.Grow(l.gtBoxes, l.num), kit.Grow(l.gtLabels, l.num)
	boxes, labels := l.gtBoxes, l.gtLabels
	for i := range boxes {
		boxes[i], labels[i] = boxes[i][:0], labels[i][:0]
	}
	for r := 0; r+8 <= len(gt); r += 8 {
		item := int(gt[r])
		if item == -1 {
			continue
		}
		if item < 0 || item >= l.num {
			return nil, nil, fmt.Errorf("ground truth row %d names image %d of a batch of %d", r/8, item, l.num)
		}
		label := int(gt[r+1])
		if label == l.background {
			return nil, nil, fmt.Errorf("ground truth row %d has the background label %d", r/8, label)
		}
		if label < 0 || label >= l.classes {
			return nil, nil, fmt.Errorf("ground truth row %d has label %d, not in [0, %d)", r/8, label, l.classes)
		}
		if gt[r+7] != 0 && !l.p.GetUseDifficultGt() {
			continue
		}
		boxes[item] = append(boxes[item], box(gt[r+3], gt[r+4], gt[r+5], gt[r+6]))
		labels[item] = append(labels[item], label)
	}
	return boxes, labels, nil
}

// match is SSD's MatchBBox on the priors for image i: per prior the index
// of its box (-1 none, -2 a prior crossing the image's border with
// ignore_cross_boundary_bbox) and its largest overlap with any box.
func (l *multiBoxLossLayer[T]) match(i int, gts, priors []normBox) ([]int, []float32) {
	idx, best := kit.Grow(l.matches[i], len(priors)), kit.Grow(l.best[i], len(priors))
	l.matches[i], l.best[i] = idx, best
	for p := range idx {
		idx[p], best[p] = -1, 0
	}
	if len(gts) == 0 {
		return idx, best
	}
	g := len(gts)
	l.overlap = kit.Grow(l.overlap, len(priors)*g)
	clear(l.overlap)
	l.touched = l.touched[:0]
	row := func(p int) []float32 { return l.overlap[p*g : (p+1)*g] }
	for p, pb := range priors {
		if l.p.GetIgnoreCrossBoundaryBbox() && (pb.XMin < 0 || pb.XMin > 1 || pb.YMin < 0 || pb.YMin > 1 || pb.XMax < 0 || pb.XMax > 1 || pb.YMax < 0 || pb.YMax > 1) {
			idx[p] = -2
			continue
		}
		any := false
		for j, gt := range gts {
			if o := data.Jaccard(pb, gt); o > 1e-6 {
				row(p)[j] = o
				best[p] = max(best[p], o)
				any = true
			}
		}
		if any {
			l.touched = append(l.touched, p)
		}
	}
	// Bipartite: the largest remaining overlap, box by box.
	l.pool = kit.Grow(l.pool, g)
	clear(l.pool)
	for range gts {
		bi, bj, bo := -1, -1, float32(-1)
		for _, p := range l.touched {
			if idx[p] != -1 {
				continue
			}
			for j, o := range row(p) {
				if !l.pool[j] && o > 1e-6 && o > bo {
					bi, bj, bo = p, j, o
				}
			}
		}
		if bi == -1 {
			break
		}
		idx[bi], best[bi], l.pool[bj] = bj, bo, true
	}
	if l.p.GetMatchType() == caffepb.MultiBoxLossParameter_PER_PREDICTION {
		thresh := l.p.GetOverlapThreshold()
		for _, p := range l.touched {
			if idx[p] != -1 {
				continue
			}
			bj, bo := -1, float32(-1)
			for j, o := range row(p) {
				if o > 1e-6 && o >= thresh && o > bo {
					bj, bo = j, o
				}
			}
			if bj != -1 {
				idx[p], best[p] = bj, bo
			}
		}
	}
	return idx, best
}

// encodeBox is SSD's EncodeBBox: box relative to the prior, in the code
// type, divided by the variances unless they are encoded in the target.
func encodeBox(prior normBox, v []float32, code caffepb.PriorBoxParameter_CodeType, varianceInTarget bool, b normBox) [4]float32 {
	if varianceInTarget {
		v = []float32{1, 1, 1, 1}
	}
	switch code {
	case caffepb.PriorBoxParameter_CORNER:
		return [4]float32{(b.XMin - prior.XMin) / v[0], (b.YMin - prior.YMin) / v[1], (b.XMax - prior.XMax) / v[2], (b.YMax - prior.YMax) / v[3]}
	case caffepb.PriorBoxParameter_CORNER_SIZE:
		w, h := prior.XMax-prior.XMin, prior.YMax-prior.YMin
		return [4]float32{(b.XMin - prior.XMin) / w / v[0], (b.YMin - prior.YMin) / h / v[1], (b.XMax - prior.XMax) / w / v[2], (b.YMax - prior.YMax) / h / v[3]}
	}
	pw, ph := prior.XMax-prior.XMin, prior.YMax-prior.YMin
	pcx, pcy := float32(float64(prior.XMin+prior.XMax)/2), float32(float64(prior.YMin+prior.YMax)/2)
	bw, bh := b.XMax-b.XMin, b.YMax-b.YMin
	bcx, bcy := float32(float64(b.XMin+b.XMax)/2), float32(float64(b.YMin+b.YMax)/2)
	return [4]float32{
		(bcx - pcx) / pw / v[0], (bcy - pcy) / ph / v[1],
		float32(math.Log(float64(bw/pw))) / v[2], float32(math.Log(float64(bh/ph))) / v[3],
	}
}

// softmaxLoss is -log of the softmax probability of label among the
// scores, floored as SSD's at FLT_MIN, and the probabilities.
func softmaxLoss[T layer.Float](scores []T, label int, prob []T) T {
	m := scores[0]
	for _, s := range scores[1:] {
		m = max(m, s)
	}
	var sum T
	for c, s := range scores {
		prob[c] = T(math.Exp(float64(s - m)))
		sum += prob[c]
	}
	for c := range prob {
		prob[c] /= sum
	}
	return T(-math.Log(math.Max(float64(prob[label]), 1.1754943508222875e-38)))
}

// ForwardCPU matches, mines and computes the loss.
func (l *multiBoxLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	loc, conf := bottom[0].CPUData(), bottom[1].CPUData()
	prior := toF32(bottom[2].CPUData())
	gts, labels, err := l.groundTruth(toF32(bottom[3].CPUData()))
	if err != nil {
		return err
	}
	l.priorBoxes = kit.Grow(l.priorBoxes, l.priors)
	priors := l.priorBoxes
	for p := range priors {
		priors[p] = box(prior[4*p], prior[4*p+1], prior[4*p+2], prior[4*p+3])
	}
	variances := prior[4*l.priors:]
	l.matches, l.best = kit.Grow(l.matches, l.num), kit.Grow(l.best, l.num)
	l.numMatches, l.numNegative, l.locDiff, l.confRows = 0, 0, l.locDiff[:0], l.confRows[:0]
	l.prob = kit.Grow(l.prob, l.classes)
	prob := l.prob
	mining := l.p.GetMiningType() == caffepb.MultiBoxLossParameter_MAX_NEGATIVE
	var locLoss, confLoss T
	for i := range l.num {
		if len(gts[i]) == 0 && mining {
			l.matches[i] = l.matches[i][:0] // no prediction of this image enters the loss
			continue
		}
		idx, overlap := l.match(i, gts[i], priors)
		// Location loss over the matches.
		for p, g := range idx {
			if g < 0 {
				continue
			}
			l.numMatches++
			target := encodeBox(priors[p], variances[4*p:4*p+4], l.p.GetCodeType(), l.p.GetEncodeVarianceInTarget(), gts[i][g])
			for k := range 4 {
				pred := loc[(i*l.priors+p)*4+k]
				if l.p.GetEncodeVarianceInTarget() {
					pred /= T(variances[4*p+k])
					target[k] /= variances[4*p+k]
				}
				d := pred - T(target[k])
				loss, grad := smoothL1(d)
				if l.p.GetLocLossType() == caffepb.MultiBoxLossParameter_L2 {
					loss, grad = d*d/2, d
				}
				if l.p.GetEncodeVarianceInTarget() {
					grad /= T(variances[4*p+k]) // d pred / d loc
				}
				locLoss += loss
				l.locDiff = append(l.locDiff, grad)
			}
		}
		l.confRows = l.appendConfRows(l.confRows, i, idx, overlap, labels[i], conf, prob, mining)
	}
	for _, r := range l.confRows {
		at := (r.image*l.priors + r.prior) * l.classes
		confLoss += softmaxLoss(conf[at:at+l.classes], r.label, prob)
	}
	l.normalizer = l.normalizerFor()
	var loss T
	if l.locOn {
		loss += T(l.p.GetLocWeight()) * locLoss / l.normalizer
	}
	if l.confOn {
		loss += confLoss / l.normalizer
	}
	top[0].MutableCPUData()[0] = loss
	return nil
}

// smoothL1 is SSD's smooth L1 (sigma 1) and its derivative.
func smoothL1[T layer.Float](d T) (T, T) {
	switch {
	case d > -1 && d < 1:
		return d * d / 2, d
	case d > 0:
		return d - 0.5, 1
	default:
		return -d - 0.5, -1
	}
}

// appendConfRows adds image i's predictions that enter the confidence
// loss: the matched priors with their boxes' labels and, mining, the
// hardest eligible negatives; without mining every prior.
func (l *multiBoxLossLayer[T]) appendConfRows(rows []confRow, i int, idx []int, overlap []float32, labels []int, conf []T, prob []T, mining bool) []confRow {
	label := func(p int) int {
		if idx[p] > -1 {
			return labels[idx[p]]
		}
		return l.background
	}
	if !mining {
		for p := range idx {
			rows = append(rows, confRow{i, p, label(p)})
		}
		return rows
	}
	positives := 0
	for p, g := range idx {
		if g > -1 {
			rows = append(rows, confRow{i, p, label(p)})
			positives++
		}
	}
	eligible := l.eligible[:0]
	negOverlap := l.p.GetNegOverlap()
	for p, g := range idx {
		if g == -1 && overlap[p] < negOverlap {
			at := (i*l.priors + p) * l.classes
			eligible = append(eligible, lossIndex[T]{softmaxLoss(conf[at:at+l.classes], l.background, prob), p})
		}
	}
	l.eligible = eligible
	n := min(int(float32(positives)*l.p.GetNegPosRatio()), len(eligible))
	slices.SortStableFunc(eligible, func(a, b lossIndex[T]) int { return cmp.Compare(b.loss, a.loss) })
	chosen := l.chosen[:0]
	for _, e := range eligible[:n] {
		chosen = append(chosen, e.prior)
	}
	slices.Sort(chosen) // SSD lists the negatives by prior
	l.chosen = chosen
	for _, p := range chosen {
		rows = append(rows, confRow{i, p, l.background})
	}
	l.numNegative += n
	return rows
}

// normalizerFor is Caffe's LossLayer::GetNormalizer with the matches as
// the valid count, at least 1.
func (l *multiBoxLossLayer[T]) normalizerFor() T {
	var n T
	switch l.normalization {
	case caffepb.LossParameter_FULL:
		n = T(l.num * l.priors)
	case caffepb.LossParameter_VALID:
		n = T(l.numMatches)
	case caffepb.LossParameter_BATCH_SIZE:
		n = T(l.num)
	default:
		n = 1
	}
	return max(n, 1)
}

// BackwardCPU writes the gradients of the predictions that entered the
// loss; the others get none.
func (l *multiBoxLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[2] || propagateDown[3] {
		return errors.New("cannot backpropagate to the priors or the ground truth")
	}
	w := top[0].CPUDiff()[0] / l.normalizer
	if propagateDown[0] {
		dx := bottom[0].MutableCPUDiff()
		clear(dx)
		if l.locOn {
			k, scale := 0, w*T(l.p.GetLocWeight())
			for i, idx := range l.matches {
				for p, g := range idx {
					if g < 0 {
						continue
					}
					for c := range 4 {
						dx[(i*l.priors+p)*4+c] = scale * l.locDiff[k]
						k++
					}
				}
			}
		}
	}
	if propagateDown[1] {
		dx, conf := bottom[1].MutableCPUDiff(), bottom[1].CPUData()
		clear(dx)
		if l.confOn {
			prob := l.prob
			for _, r := range l.confRows {
				at := (r.image*l.priors + r.prior) * l.classes
				softmaxLoss(conf[at:at+l.classes], r.label, prob)
				for c, q := range prob {
					if c == r.label {
						q--
					}
					dx[at+c] = w * q
				}
			}
		}
	}
	return nil
}
