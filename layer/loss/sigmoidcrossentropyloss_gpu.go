package loss

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// sigmoidCrossEntropyLossGPU is SigmoidCrossEntropyLoss's GPU half.
type sigmoidCrossEntropyLossGPU[T layer.Float] struct {
	l *sigmoidCrossEntropyLossLayer[T]
}

func newSigmoidCrossEntropyLossGPU[T layer.Float](l *sigmoidCrossEntropyLossLayer[T]) layer.Engine[T] {
	return sigmoidCrossEntropyLossGPU[T]{l}
}

func (l *sigmoidCrossEntropyLossLayer[T]) ignoreArgs(a *cuda.Args) *cuda.Args {
	has := 0
	if l.hasIgnore {
		has = 1
	}
	return a.Int(has).Int(l.ignore)
}

// Forward computes the per-element losses on the device and sums them
// there; only the sum (and, for VALID, the count) comes back.
func (e sigmoidCrossEntropyLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	counts := g.MutableData(l.counts)
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(l.lossData)).Ptr(counts)
	if err := launch[T](l.Context(), "sigmoid_cross_entropy_loss.cu", "sigmoid_cross_entropy_loss_forward", n, l.ignoreArgs(&a)); err != nil {
		return err
	}
	// Ignored elements have loss 0 and count 0, the others count 1: the
	// dot product is the sum of the losses whatever their signs.
	loss := g.Dot(n, g.Data(l.lossData), counts)
	valid := -1
	if l.mode == caffepb.LossParameter_VALID && l.hasIgnore {
		valid = int(g.Asum(n, counts) + 0.5)
	}
	if err := g.Err(); err != nil {
		return err
	}
	l.normalizer = normalizer(l.mode, l.outer, l.inner, valid)
	top[0].MutableCPUData()[0] = T(float64(loss) / l.normalizer)
	return nil
}

// Backward computes the gradient on the device.
func (e sigmoidCrossEntropyLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[1] {
		return fmt.Errorf("%s layer cannot backpropagate to label inputs", l.Type())
	}
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	scale := T(float64(top[0].CPUDiff()[0]) / l.normalizer)
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0]))
	l.ignoreArgs(kit.ScalarArg(&a, scale))
	return launch[T](l.Context(), "sigmoid_cross_entropy_loss.cu", "sigmoid_cross_entropy_loss_backward", n, &a)
}
