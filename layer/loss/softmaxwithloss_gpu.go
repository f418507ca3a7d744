package loss

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// softmaxWithLossGPU is SoftmaxWithLoss's GPU half.
type softmaxWithLossGPU[T layer.Float] struct{ l *softmaxWithLossLayer[T] }

func newSoftmaxWithLossGPU[T layer.Float](l *softmaxWithLossLayer[T]) layer.Engine[T] {
	return softmaxWithLossGPU[T]{l}
}

// scratch sizes the per-position loss and count buffers and the
// normalizer's.
func (l *softmaxWithLossLayer[T]) scratch() error {
	n := l.outer * l.inner
	for _, b := range []**blob.Blob[T]{&l.lossData, &l.counts, &l.lossNorm} {
		if *b == nil {
			nb, err := l.NewBlob()
			if err != nil {
				return err
			}
			*b = nb
		}
	}
	for _, b := range []*blob.Blob[T]{l.lossData, l.counts} {
		if err := b.Reshape([]int{n}); err != nil {
			return err
		}
	}
	return l.lossNorm.Reshape([]int{1})
}

func (l *softmaxWithLossLayer[T]) ignoreArgs(a *cuda.Args) *cuda.Args {
	has := 0
	if l.hasIgnore {
		has = 1
	}
	return a.Int(has).Int(l.ignore)
}

// Forward computes the per-position losses and their normalised sum on the
// device, reading nothing back: training waits for the device only where
// the solver reads the loss. An invalid label makes the loss NaN; the
// labels are read back to say which one only then (ExplainNaN).
func (e softmaxWithLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if _, err := layer.Forward[T](l.softmax, bottom[:1], l.probTop); err != nil {
		return err
	}
	if err := l.scratch(); err != nil {
		return err
	}
	l.labels = bottom[1]
	g := l.GPU()
	n := l.outer * l.inner
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(l.prob)).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(l.lossData)).Ptr(g.MutableData(l.counts))
	if err := launch[T](l.Context(), "softmax_loss.cu", "softmax_loss_forward", n, l.ignoreArgs(&a)); err != nil {
		return err
	}
	// VALID with an ignored label divides by the positions counted;
	// the other modes by a number known here (normalizer's -1: all).
	useCounts := 0
	if l.mode == caffepb.LossParameter_VALID && l.hasIgnore {
		useCounts = 1
	}
	var t cuda.Args
	t.Int(n).Ptr(g.Data(l.lossData)).Ptr(g.Data(l.counts)).Int(useCounts).Float64(normalizer(l.mode, l.outer, l.inner, -1))
	t.Ptr(g.MutableData(top[0])).Ptr(g.MutableData(l.lossNorm))
	if err := g.Err(); err != nil {
		return err
	}
	f, err := kernel[T](l.Context(), "softmax_loss.cu", "softmax_loss_total")
	if err != nil {
		return err
	}
	if err := f.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 256}, 0, nil, &t); err != nil {
		return err
	}
	if len(top) == 2 {
		return top[1].ShareData(l.prob)
	}
	return nil
}

// ExplainNaN names the first label that is no class, the cause of a NaN
// loss the forward pass can have; nil when every label is one.
func (e softmaxWithLossGPU[T]) ExplainNaN() error {
	l := e.l
	if l.labels == nil {
		return nil
	}
	if err := checkLabels(l.labels, l.channels, l.hasIgnore, l.ignore); err != nil {
		return err
	}
	return fmt.Errorf("loss is NaN")
}

// Backward computes the gradient on the device, scaled by the top's
// gradient over the forward pass's normalizer, both read there.
func (e softmaxWithLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[1] {
		return fmt.Errorf("%s layer cannot backpropagate to label inputs", l.Type())
	}
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	dx := g.MutableDiff(bottom[0])
	g.Copy(l.prob.Count(), g.Data(l.prob), dx)
	n := l.outer * l.inner
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(bottom[1])).Ptr(dx).Ptr(g.MutableData(l.counts))
	if err := launch[T](l.Context(), "softmax_loss.cu", "softmax_loss_backward", n, l.ignoreArgs(&a)); err != nil {
		return err
	}
	var s cuda.Args
	s.Int(l.prob.Count()).Ptr(dx).Ptr(g.Diff(top[0])).Ptr(g.Data(l.lossNorm))
	if err := g.Err(); err != nil {
		return err
	}
	return launch[T](l.Context(), "softmax_loss.cu", "scale_by_ratio", l.prob.Count(), &s)
}
