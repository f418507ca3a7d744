package detection

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "DetectionOutput",
		New32: newDetectionOutput[float32], New64: newDetectionOutput[float64],
		ONNXWhy:  "its non-maximum suppression has no ONNX form gocaffe writes",
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// DetectionOutput is SSD's detection head at inference
// (weiliu89/caffe; detection_output_param). Bottoms: the location
// predictions (N x priors*classes_loc*4, classes_loc 1 with share_location),
// the class confidences (N x priors*classes, usually after softmax) and
// PriorBox's output (1 x 2 x priors*4). Each prediction is decoded against
// its prior (code_type, the prior's variances unless they are encoded in
// the target), each class but the background is reduced by non-maximum
// suppression (nms_param: threshold, top_k, eta) among the boxes scoring
// above confidence_threshold, and at most keep_top_k detections per image
// survive, best first. The top is 1 x 1 x D x 7, one row per detection:
// image, label, score, xmin, ymin, xmax, ymax; with none at all, one row
// per image of -1 but the image index, as SSD writes it. Rows are by
// image, then label, then score. save_output_param's files are not
// written.
type detectionOutputLayer[T layer.Float] struct {
	layer.Base[T]
	numClasses, locClasses int
	share                  bool
	background             int
	code                   caffepb.PriorBoxParameter_CodeType
	varianceInTarget       bool
	keepTopK, topK         int
	confidence, nmsThresh  float32
	eta                    float32
	priors                 int

	// A pass's memory, kept so that passes allocate nothing once grown.
	priorBoxes []normBox
	classes    []int         // the classes suppressed (all but the background)
	perClass   [][]detection // each class's kept boxes in the image at hand
	workers    []nmsWorker   // per core
	all, dets  []detection
}

// nmsWorker is the memory one core suppresses its classes in.
type nmsWorker struct {
	boxes  []normBox
	scores []float32
	nms    nmsScratch
}

func newDetectionOutput[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &detectionOutputLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	dp := p.GetDetectionOutputParam()
	if dp == nil || dp.NumClasses == nil {
		return nil, errors.New("detection_output_param: must specify num_classes")
	}
	l.numClasses, l.share = int(dp.GetNumClasses()), dp.GetShareLocation()
	l.locClasses = 1
	if !l.share {
		l.locClasses = l.numClasses
	}
	l.background, l.code, l.varianceInTarget = int(dp.GetBackgroundLabelId()), dp.GetCodeType(), dp.GetVarianceEncodedInTarget()
	l.keepTopK, l.confidence = int(dp.GetKeepTopK()), -math.MaxFloat32
	if dp.ConfidenceThreshold != nil {
		l.confidence = dp.GetConfidenceThreshold()
	}
	np := dp.GetNmsParam()
	l.nmsThresh, l.eta, l.topK = np.GetNmsThreshold(), np.GetEta(), -1
	if np.TopK != nil {
		l.topK = int(np.GetTopK())
	}
	if l.nmsThresh < 0 {
		return nil, fmt.Errorf("nms_threshold must be non negative, got %v", l.nmsThresh)
	}
	if !(l.eta > 0 && l.eta <= 1) {
		return nil, fmt.Errorf("nms_param.eta must be in (0, 1], got %v", l.eta)
	}
	if dir := dp.GetSaveOutputParam().GetOutputDirectory(); dir != "" {
		l.Logger().Warn(fmt.Sprintf("Layer %s: save_output_param is not supported; no detection files are written to %s", l.Name(), dir))
	}
	return l, nil
}

// Type returns "DetectionOutput".
func (*detectionOutputLayer[T]) Type() string { return "DetectionOutput" }

// Counts: locations, confidences, priors; one top.
func (*detectionOutputLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(3), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing more to set up.
func (*detectionOutputLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the bottoms against each other; the top's size is known
// only after a forward pass, which reshapes it (one row until then).
func (l *detectionOutputLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	loc, conf, prior := bottom[0], bottom[1], bottom[2]
	if loc.Shape()[0] != conf.Shape()[0] {
		return fmt.Errorf("locations %s and confidences %s disagree on the batch", loc.ShapeString(), conf.ShapeString())
	}
	if prior.NumAxes() < 3 || prior.Shape()[1] != 2 {
		return fmt.Errorf("priors %s must be 1 x 2 x (4 * priors), as PriorBox writes", prior.ShapeString())
	}
	l.priors = prior.CountFrom(2) / 4
	if got := loc.CountFrom(1); got != l.priors*l.locClasses*4 {
		return fmt.Errorf("locations %s hold %d values per image, want %d priors x %d classes x 4", loc.ShapeString(), got, l.priors, l.locClasses)
	}
	if got := conf.CountFrom(1); got != l.priors*l.numClasses {
		return fmt.Errorf("confidences %s hold %d values per image, want %d priors x %d classes", conf.ShapeString(), got, l.priors, l.numClasses)
	}
	return top[0].Reshape([]int{1, 1, 1, 7})
}

// detection is one kept box; rank is its place among its image's
// detections before keep_top_k (by label, then as suppression kept them).
type detection struct {
	image, label, rank int
	score              float32
	box                normBox
}

// ForwardCPU decodes, suppresses and writes the detections.
func (l *detectionOutputLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	num := bottom[0].Shape()[0]
	loc, conf, prior := toF32(bottom[0].CPUData()), toF32(bottom[1].CPUData()), toF32(bottom[2].CPUData())
	priorBoxes := growTo(l.priorBoxes, l.priors)
	for p := range priorBoxes {
		b := prior[4*p:]
		priorBoxes[p] = box(b[0], b[1], b[2], b[3])
	}
	variances := prior[4*l.priors:]
	all := l.all[:0]
	l.priorBoxes = priorBoxes
	classes := l.classes[:0]
	for c := range l.numClasses {
		if c != l.background {
			classes = append(classes, c)
		}
	}
	l.classes = classes
	perClass := growTo(l.perClass, len(classes))
	l.perClass = perClass
	parts := 1
	if len(classes)*l.priors >= kit.ElementParallelMin {
		parts = mathfn.Parts(len(classes))
	}
	workers := growTo(l.workers, parts)
	l.workers = workers
	for i := range num {
		// The classes' suppressions are independent: spread over the
		// cores, each worker decoding the boxes its classes need, each
		// class's detections kept apart and joined in class order.
		suppress := func(part, lo, hi int) {
			w := &workers[part]
			w.boxes, w.scores = growTo(w.boxes, l.priors), growTo(w.scores, l.priors)
			decoded := -1 // the location class w.boxes holds
			for k := lo; k < hi; k++ {
				c := classes[k]
				if lc := l.locClass(c); lc != decoded {
					for p := range w.boxes {
						at := ((i*l.priors+p)*l.locClasses + lc) * 4
						w.boxes[p] = decodeBox(priorBoxes[p], variances[4*p:4*p+4], l.code, l.varianceInTarget, loc[at:at+4])
					}
					decoded = lc
				}
				for p := range w.scores {
					w.scores[p] = conf[(i*l.priors+p)*l.numClasses+c]
				}
				d := perClass[k][:0]
				for _, j := range w.nms.nms(w.boxes, w.scores, l.confidence, l.nmsThresh, l.eta, l.topK) {
					d = append(d, detection{image: i, label: c, score: w.scores[j], box: w.boxes[j]})
				}
				perClass[k] = d
			}
		}
		if parts > 1 {
			mathfn.Parallel(len(classes), suppress)
		} else {
			suppress(0, 0, len(classes))
		}
		dets := l.dets[:0]
		for _, d := range perClass {
			for _, x := range d {
				x.rank = len(dets)
				dets = append(dets, x)
			}
		}
		if l.keepTopK > -1 && len(dets) > l.keepTopK {
			l.keepBest(dets)
			dets = dets[:l.keepTopK]
		}
		all = append(all, dets...)
		l.dets = dets
	}
	l.all = all
	return l.write(top[0], all, num)
}

// keepBest moves an image's keep_top_k best detections to the front of
// dets in SSD's order: SSD sorts them all by score, stably, keeps the
// first keep_top_k and sorts those by label, stably. Ties of score broken
// by rank make the first sort stable's; and since the detections come
// by label, each label's best first, the second is an order by rank.
// Two stable sorts (symmerge) of the thousands of detections the
// fillers' weights give took a tenth of MobileNet-SSD's DetectionOutput.
func (l *detectionOutputLayer[T]) keepBest(dets []detection) {
	slices.SortFunc(dets, func(a, b detection) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
	slices.SortFunc(dets[:l.keepTopK], func(a, b detection) int { return cmp.Compare(a.rank, b.rank) })
}

// growTo returns s with length n, reusing its array when it is big
// enough.
func growTo[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// locClass is the location class whose boxes class c uses.
func (l *detectionOutputLayer[T]) locClass(c int) int {
	if l.share {
		return 0
	}
	return c
}

// write fills the top with the detections' rows.
func (l *detectionOutputLayer[T]) write(top *blob.Blob[T], dets []detection, num int) error {
	if len(dets) == 0 {
		if err := top.Reshape([]int{1, 1, num, 7}); err != nil {
			return err
		}
		out := top.MutableCPUData()
		for i := range out {
			out[i] = -1
		}
		for i := range num {
			out[7*i] = T(i)
		}
		return nil
	}
	if err := top.Reshape([]int{1, 1, len(dets), 7}); err != nil {
		return err
	}
	out := top.MutableCPUData()
	for k, d := range dets {
		copy(out[7*k:7*k+7], []T{T(d.image), T(d.label), T(d.score), T(d.box.XMin), T(d.box.YMin), T(d.box.XMax), T(d.box.YMax)})
	}
	return nil
}

// BackwardCPU does nothing: detections have no gradient.
func (*detectionOutputLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

func toF32[T layer.Float](x []T) []float32 {
	if f, ok := any(x).([]float32); ok {
		return f
	}
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
