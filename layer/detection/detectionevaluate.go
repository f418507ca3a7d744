package detection

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	if err := layer.RegisterEvalType("detection", func() layer.TestEvaluation { return &DetectionEval{} }); err != nil {
		panic(err)
	}
	layer.MustRegisterType(layer.Spec{
		Type:  "DetectionEvaluate",
		New32: newDetectionEvaluate[float32], New64: newDetectionEvaluate[float64],
		ONNXWhy:  "compares detections with the ground truth, used in testing only",
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// DetectionEvaluate is SSD's evaluation of detections against the ground
// truth (weiliu89/caffe; detection_evaluate_param), whose rows a solver
// with eval_type: "detection" turns into mean average precision
// (DetectionEval). Bottoms: DetectionOutput's rows (1 x 1 x D x 7) and the
// ground truth (1 x 1 x G x 8). The top is 1 x 1 x (classes - 1 + D') x 5:
// first per class but the background (-1, label, number of boxes, -1, -1),
// difficult ones counted only with evaluate_difficult_gt; then per
// detection (image, label, score, tp, fp), each image's detections of a
// label best first, a detection a true positive when it overlaps a box of
// its label not taken by a better one by overlap_threshold (a detection
// whose best box is difficult and not evaluated is neither). Boxes are
// compared in normalized coordinates; name_size_file is not supported.
type detectionEvaluateLayer[T layer.Float] struct {
	layer.Base[T]
	classes, background int
	overlap             float32
	difficult           bool
}

func newDetectionEvaluate[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &detectionEvaluateLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	dp := p.GetDetectionEvaluateParam()
	if dp == nil || dp.NumClasses == nil {
		return nil, errors.New("detection_evaluate_param: must provide num_classes")
	}
	if dp.GetNameSizeFile() != "" {
		return nil, errors.New("detection_evaluate_param: name_size_file (evaluation in original image sizes) is not supported; boxes are compared normalized")
	}
	l.classes, l.background = int(dp.GetNumClasses()), int(dp.GetBackgroundLabelId())
	l.overlap, l.difficult = dp.GetOverlapThreshold(), dp.GetEvaluateDifficultGt()
	return l, nil
}

// Type returns "DetectionEvaluate".
func (*detectionEvaluateLayer[T]) Type() string { return "DetectionEvaluate" }

// Counts: detections and ground truth.
func (*detectionEvaluateLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing more to set up.
func (*detectionEvaluateLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the bottoms; the forward pass sizes the top.
func (l *detectionEvaluateLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0].Count()%7 != 0 || bottom[1].Count()%8 != 0 {
		return fmt.Errorf("detections %s need rows of 7 values and ground truth %s rows of 8", bottom[0].ShapeString(), bottom[1].ShapeString())
	}
	return top[0].Reshape([]int{1, 1, l.positiveClasses(), 5})
}

func (l *detectionEvaluateLayer[T]) positiveClasses() int {
	if l.background == -1 {
		return l.classes
	}
	return l.classes - 1
}

// evalBox is a ground-truth box and whether it is difficult.
type evalBox struct {
	box       normBox
	difficult bool
}

// ForwardCPU counts the boxes and marks each detection.
func (l *detectionEvaluateLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	det, gt := toF32(bottom[0].CPUData()), toF32(bottom[1].CPUData())
	truth := map[[2]int][]evalBox{} // by image and label
	positives := map[int]int{}
	for r := 0; r+8 <= len(gt); r += 8 {
		if gt[r] == -1 {
			continue
		}
		key := [2]int{int(gt[r]), int(gt[r+1])}
		b := evalBox{box(gt[r+3], gt[r+4], gt[r+5], gt[r+6]), gt[r+7] != 0}
		truth[key] = append(truth[key], b)
		if l.difficult || !b.difficult {
			positives[key[1]]++
		}
	}
	type scored struct {
		score float32
		box   normBox
	}
	dets := map[[2]int][]scored{}
	var keys [][2]int
	for r := 0; r+7 <= len(det); r += 7 {
		if det[r] == -1 || det[r+1] == -1 {
			continue
		}
		key := [2]int{int(det[r]), int(det[r+1])}
		if _, ok := dets[key]; !ok {
			keys = append(keys, key)
		}
		dets[key] = append(dets[key], scored{det[r+2], box(det[r+3], det[r+4], det[r+5], det[r+6])})
	}
	// SSD walks its maps: images, then labels, in increasing order.
	sort.Slice(keys, func(a, b int) bool {
		return keys[a][0] < keys[b][0] || keys[a][0] == keys[b][0] && keys[a][1] < keys[b][1]
	})
	var rows []T
	for c := range l.classes {
		if c != l.background {
			rows = append(rows, -1, T(c), T(positives[c]), -1, -1)
		}
	}
	for _, key := range keys {
		ds := dets[key]
		sort.SliceStable(ds, func(a, b int) bool { return ds[a].score > ds[b].score })
		boxes := truth[key]
		taken := make([]bool, len(boxes))
		for _, d := range ds {
			tp, fp := T(0), T(1)
			best, at := float32(-1), -1
			for j, g := range boxes {
				if o := data.Jaccard(d.box, g.box); o > best {
					best, at = o, j
				}
			}
			if at >= 0 && best >= l.overlap {
				switch {
				case !l.difficult && boxes[at].difficult:
					tp, fp = 0, 0 // neither: a difficult box not evaluated
				case !taken[at]:
					tp, fp, taken[at] = 1, 0, true
				}
			}
			rows = append(rows, T(key[0]), T(key[1]), T(d.score), tp, fp)
		}
	}
	if err := top[0].Reshape([]int{1, 1, len(rows) / 5, 5}); err != nil {
		return err
	}
	copy(top[0].MutableCPUData(), rows)
	return nil
}

// BackwardCPU does nothing: evaluation has no gradient.
func (*detectionEvaluateLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// DetectionEval accumulates DetectionEvaluate's rows over test batches and
// computes the mean average precision, as SSD's solver does for
// eval_type: "detection".
type DetectionEval struct {
	positives map[int]int
	hits      map[int][]scoredHit
}

type scoredHit struct {
	score float32
	tp    int
}

// Add takes one batch's rows (5 values each), DetectionEvaluate's top.
func (e *DetectionEval) Add(shape []int, rows []float32) error {
	if len(shape) == 0 || shape[len(shape)-1] != 5 {
		return fmt.Errorf("eval_type detection needs DetectionEvaluate's rows of 5 values; the output is %v", shape)
	}
	if e.positives == nil {
		e.positives, e.hits = map[int]int{}, map[int][]scoredHit{}
	}
	for r := 0; r+5 <= len(rows); r += 5 {
		label := int(rows[r+1])
		if int(rows[r]) == -1 {
			e.positives[label] += int(rows[r+2])
			continue
		}
		tp, fp := int(rows[r+3]), int(rows[r+4])
		if tp == 0 && fp == 0 {
			continue
		}
		e.hits[label] = append(e.hits[label], scoredHit{rows[r+2], tp})
	}
	return nil
}

// Score is the mean average precision in the solver's ap_version (MAP).
func (e *DetectionEval) Score(sp *caffepb.SolverParameter) (float64, error) {
	return e.MAP(sp.GetApVersion())
}

// MAP returns the mean over the labels seen with detections of their
// average precision, computed as ap_version says: "11point" (VOC2007),
// "MaxIntegral" (VOC2012) or "Integral" (ILSVRC). Labels with boxes but
// no detection count zero, as in SSD, whose mean divides by every label
// with a positive row.
func (e *DetectionEval) MAP(apVersion string) (float64, error) {
	if len(e.positives) == 0 {
		return 0, nil
	}
	var sum float64
	for label, n := range e.positives {
		ap, err := averagePrecision(e.hits[label], n, apVersion)
		if err != nil {
			return 0, err
		}
		sum += float64(ap)
	}
	return sum / float64(len(e.positives)), nil
}

// averagePrecision is SSD's ComputeAP for one label.
func averagePrecision(hits []scoredHit, positives int, version string) (float32, error) {
	switch version {
	case "11point", "MaxIntegral", "Integral":
	default:
		return 0, fmt.Errorf("unknown ap_version %q (11point, MaxIntegral or Integral)", version)
	}
	if len(hits) == 0 || positives == 0 {
		return 0, nil
	}
	sorted := append([]scoredHit(nil), hits...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].score > sorted[b].score })
	prec, rec := make([]float32, len(sorted)), make([]float32, len(sorted))
	tp, fp := 0, 0
	for i, h := range sorted {
		tp += h.tp
		fp += 1 - h.tp
		prec[i] = float32(tp) / float32(tp+fp)
		rec[i] = float32(tp) / float32(positives)
	}
	const eps = 1e-6
	var ap float32
	switch version {
	case "11point":
		var maxPrec [11]float32
		start := len(sorted) - 1
		for j := 10; j >= 0; j-- {
			for i := start; i >= 0; i-- {
				if float64(rec[i]) < float64(j)/10 {
					start = i
					if j > 0 {
						maxPrec[j-1] = maxPrec[j]
					}
					break
				}
				maxPrec[j] = max(maxPrec[j], prec[i])
			}
		}
		for j := 10; j >= 0; j-- {
			ap += maxPrec[j] / 11
		}
	case "MaxIntegral":
		curRec, curPrec := rec[len(rec)-1], prec[len(prec)-1]
		for i := len(rec) - 2; i >= 0; i-- {
			curPrec = max(prec[i], curPrec)
			if math.Abs(float64(curRec-rec[i])) > eps {
				ap += curPrec * float32(math.Abs(float64(curRec-rec[i])))
			}
			curRec = rec[i]
		}
		ap += curRec * curPrec
	case "Integral":
		var prevRec float32
		for i := range rec {
			if math.Abs(float64(rec[i]-prevRec)) > eps {
				ap += prec[i] * float32(math.Abs(float64(rec[i]-prevRec)))
			}
			prevRec = rec[i]
		}
	}
	return ap, nil
}
