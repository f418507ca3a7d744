package loss

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Accuracy",
		New32: newAccuracy[float32], New64: newAccuracy[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newAccuracyGPU[float32], newAccuracyGPU[float64])},
		ONNX:    layer.ONNXDropped, ONNXWhy: "compares with labels, used in testing only",
	})
}

// Accuracy is the fraction of positions whose label is among the top_k
// (default 1) scores: bottom 0 holds scores with the classes along
// accuracy_param.axis (default 1), bottom 1 one label per outer x inner
// position. As in Caffe, a position is correct when fewer than top_k other
// classes score at least as high as the true class (a tie counts against
// it). Positions labelled accuracy_param.ignore_label are skipped. An
// optional second top receives the accuracy of each class (0 for a class
// with no samples). It has no backward.
type accuracyLayer[T layer.Float] struct {
	layer.Base[T]
	topK                   int
	hasIgnore              bool
	ignore                 int
	outer, classes, inner  int
	correct, counts        *blob.Blob[T] // per position, on the GPU
	classCorrect, classNum *blob.Blob[T] // per class, on the GPU
}

func newAccuracy[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &accuracyLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ap := p.GetAccuracyParam()
	l.topK = int(ap.GetTopK())
	l.hasIgnore, l.ignore = ap != nil && ap.IgnoreLabel != nil, int(ap.GetIgnoreLabel())
	return l, nil
}

// Type returns "Accuracy".
func (*accuracyLayer[T]) Type() string { return "Accuracy" }

// Counts returns scores and labels in, the accuracy (and optionally the
// per-class accuracies) out.
func (*accuracyLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Between(1, 2)}
}

// LayerSetUp creates the scratch blobs (sized only when the GPU uses them).
func (l *accuracyLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	for _, b := range []**blob.Blob[T]{&l.correct, &l.counts, &l.classCorrect, &l.classNum} {
		nb, err := l.NewBlob()
		if err != nil {
			return err
		}
		*b = nb
	}
	return nil
}

// Reshape checks that there is one label per position and top_k classes to
// choose from, and sizes the tops.
func (l *accuracyLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := bottom[0].CanonicalAxisIndex(int(l.Param().GetAccuracyParam().GetAxis()))
	if err != nil {
		return err
	}
	l.outer, l.classes, l.inner = bottom[0].CountRange(0, axis), bottom[0].Shape()[axis], bottom[0].CountFrom(axis+1)
	if bottom[1].Count() != l.outer*l.inner {
		return fmt.Errorf("number of labels must match number of predictions: %d labels (%s) for %d positions of %s (label axis %d); "+
			"e.g., if label axis == 1 and prediction shape is (N, C, H, W), label count must be N*H*W, with integer values in {0, 1, ..., C-1}",
			bottom[1].Count(), bottom[1].ShapeString(), l.outer*l.inner, bottom[0].ShapeString(), axis)
	}
	if l.topK > l.classes {
		return fmt.Errorf("top_k must be less than or equal to the number of classes: top_k %d, %d classes", l.topK, l.classes)
	}
	if err := top[0].Reshape(kit.ScalarShape()); err != nil {
		return err
	}
	for _, r := range []struct {
		b *blob.Blob[T]
		n int
	}{{l.correct, l.outer * l.inner}, {l.counts, l.outer * l.inner}, {l.classCorrect, l.classes}, {l.classNum, l.classes}} {
		if err := r.b.Reshape([]int{r.n}); err != nil {
			return err
		}
	}
	if len(top) == 2 {
		return top[1].Reshape([]int{l.classes})
	}
	return nil
}

// accuracyInTopK reports whether the score at base + label*inner is among the top
// k of the classes at base + c*inner: whether fewer than k other classes
// score at least as high.
func accuracyInTopK[T layer.Float](scores []T, base, classes, inner, label, k int) bool {
	p := scores[base+label*inner]
	better := -1 // the true class counts itself
	for c := 0; c < classes && better < k; c++ {
		if scores[base+c*inner] >= p {
			better++
		}
	}
	return better < k
}

// ForwardCPU computes the accuracy (and per-class accuracies) on the host.
func (l *accuracyLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	scores, labels := bottom[0].CPUData(), bottom[1].CPUData()
	perClass := len(top) == 2
	var classCorrect, classNum []T
	if perClass {
		classCorrect, classNum = top[1].MutableCPUData(), l.classNum.MutableCPUData()
		clear(classCorrect)
		clear(classNum)
	}
	correct, count := 0, 0
	for i := range l.outer {
		for j := range l.inner {
			pos := i*l.inner + j
			v := labels[pos]
			if err := checkLabel(v, pos, l.classes, l.hasIgnore, l.ignore); err != nil {
				return err
			}
			if l.hasIgnore && int(v) == l.ignore {
				continue
			}
			label := int(v)
			ok := accuracyInTopK(scores, i*l.classes*l.inner+j, l.classes, l.inner, label, l.topK)
			count++
			if ok {
				correct++
			}
			if perClass {
				classNum[label]++
				if ok {
					classCorrect[label]++
				}
			}
		}
	}
	top[0].MutableCPUData()[0] = 0
	if count > 0 {
		top[0].MutableCPUData()[0] = T(float64(correct) / float64(count))
	}
	for c := range classCorrect {
		if classNum[c] > 0 {
			classCorrect[c] /= classNum[c]
		}
	}
	return nil
}

// errAccuracyBackward is returned when asked to back-propagate.
var errAccuracyBackward = errors.New("cannot backpropagate: an accuracy has no gradient")

// BackwardCPU returns an error if asked for any gradient.
func (l *accuracyLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return accuracyBackward(propagateDown)
}

func accuracyBackward(propagateDown []bool) error {
	for _, p := range propagateDown {
		if p {
			return errAccuracyBackward
		}
	}
	return nil
}
