package layer

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	registerGPU("SoftmaxWithLoss", newSoftmaxWithLossGPU[float32], newSoftmaxWithLossGPU[float64])
}

// softmaxWithLossGPU is SoftmaxWithLoss's GPU half.
type softmaxWithLossGPU[T Float] struct{ l *SoftmaxWithLoss[T] }

func newSoftmaxWithLossGPU[T Float](l *SoftmaxWithLoss[T]) Engine[T] { return softmaxWithLossGPU[T]{l} }

// scratch sizes the per-position loss and count buffers.
func (l *SoftmaxWithLoss[T]) scratch() error {
	n := l.outer * l.inner
	for _, b := range []**blob.Blob[T]{&l.lossData, &l.counts} {
		if *b == nil {
			nb, err := l.NewBlob()
			if err != nil {
				return err
			}
			*b = nb
		}
		if err := (*b).Reshape([]int{n}); err != nil {
			return err
		}
	}
	return nil
}

func (l *SoftmaxWithLoss[T]) ignoreArgs(a *cuda.Args) *cuda.Args {
	has := 0
	if l.hasIgnore {
		has = 1
	}
	return a.Int(has).Int(l.ignore)
}

// validCount returns the non-ignored positions for the VALID normalizer
// (-1, meaning all, when no label can be ignored).
func (l *SoftmaxWithLoss[T]) validCount(g *device.GPUView[T]) int {
	if l.mode != caffepb.LossParameter_VALID || !l.hasIgnore {
		return -1
	}
	return int(g.Asum(l.counts.Count(), g.Data(l.counts)) + 0.5)
}

// Forward computes the per-position losses on the device and sums them.
// An invalid label makes its position's loss NaN; only then are the labels
// read back to say which one.
func (e softmaxWithLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if _, err := Forward[T](l.softmax, bottom[:1], l.probTop); err != nil {
		return err
	}
	if err := l.scratch(); err != nil {
		return err
	}
	g := l.gpu()
	n := l.outer * l.inner
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(l.prob)).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(l.lossData)).Ptr(g.MutableData(l.counts))
	if err := launch[T](l.ctx, "softmax_loss.cu", "softmax_loss_forward", n, l.ignoreArgs(&a)); err != nil {
		return err
	}
	loss := g.Asum(n, g.Data(l.lossData))
	valid := l.validCount(g)
	if err := g.Err(); err != nil {
		return err
	}
	if math.IsNaN(float64(loss)) {
		if err := checkLabels(bottom[1], l.channels, l.hasIgnore, l.ignore); err != nil {
			return err
		}
		return fmt.Errorf("loss is NaN")
	}
	top[0].MutableCPUData()[0] = T(float64(loss) / normalizer(l.mode, l.outer, l.inner, valid))
	if len(top) == 2 {
		return top[1].ShareData(l.prob)
	}
	return nil
}

// Backward computes the gradient on the device.
func (e softmaxWithLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[1] {
		return fmt.Errorf("%s layer cannot backpropagate to label inputs", l.Type())
	}
	if !propagateDown[0] {
		return nil
	}
	g := l.gpu()
	dx := g.MutableDiff(bottom[0])
	g.Copy(l.prob.Count(), g.Data(l.prob), dx)
	n := l.outer * l.inner
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(bottom[1])).Ptr(dx).Ptr(g.MutableData(l.counts))
	if err := launch[T](l.ctx, "softmax_loss.cu", "softmax_loss_backward", n, l.ignoreArgs(&a)); err != nil {
		return err
	}
	valid := l.validCount(g)
	scale := float64(top[0].CPUDiff()[0]) / normalizer(l.mode, l.outer, l.inner, valid)
	g.Scal(l.prob.Count(), T(scale), dx)
	return g.Err()
}
