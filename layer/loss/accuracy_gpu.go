package loss

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// accuracyGPU is Accuracy's GPU half.
type accuracyGPU[T layer.Float] struct{ l *accuracyLayer[T] }

func newAccuracyGPU[T layer.Float](l *accuracyLayer[T]) layer.Engine[T] { return accuracyGPU[T]{l} }

// Forward marks each position correct or not on the device and sums the
// marks there; only the two sums come back to the host. An invalid label
// makes its mark NaN; only then are the labels read back to say which.
// The per-class accuracies are computed on the device too.
func (e accuracyGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := l.outer * l.inner
	perClass := 0
	classCorrect, classNum := g.MutableData(l.classCorrect), g.MutableData(l.classNum)
	if len(top) == 2 {
		perClass = 1
		g.Set(l.classes, 0, classCorrect)
		g.Set(l.classes, 0, classNum)
	}
	has := 0
	if l.hasIgnore {
		has = 1
	}
	correct, counts := g.MutableData(l.correct), g.MutableData(l.counts)
	var a cuda.Args
	a.Int(n).Int(l.classes).Int(l.inner).Int(l.topK).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).
		Ptr(correct).Ptr(counts).Int(has).Int(l.ignore).Int(perClass).Ptr(classCorrect).Ptr(classNum)
	if err := g.Err(); err != nil {
		return err
	}
	if err := launch[T](l.Context(), "accuracy.cu", "accuracy_forward", n, &a); err != nil {
		return err
	}
	right, count := g.Asum(n, correct), g.Asum(n, counts)
	if err := g.Err(); err != nil {
		return err
	}
	if math.IsNaN(float64(right)) {
		if err := checkLabels(bottom[1], l.classes, l.hasIgnore, l.ignore); err != nil {
			return err
		}
		return fmt.Errorf("accuracy is NaN")
	}
	top[0].MutableCPUData()[0] = 0
	if count > 0 {
		top[0].MutableCPUData()[0] = right / count
	}
	if perClass == 0 {
		return nil
	}
	var b cuda.Args
	b.Int(l.classes).Ptr(classCorrect).Ptr(classNum).Ptr(g.MutableData(top[1]))
	return launch[T](l.Context(), "accuracy.cu", "accuracy_per_class", l.classes, &b)
}

// Backward returns an error if asked for any gradient.
func (accuracyGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return accuracyBackward(propagateDown)
}
