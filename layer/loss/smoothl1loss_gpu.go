package loss

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// smoothL1LossGPU is SmoothL1Loss's GPU half; diff holds w_in * (a - b),
// errs each element's loss before the outside weight.
type smoothL1LossGPU[T layer.Float] struct {
	l          *smoothL1LossLayer[T]
	diff, errs *blob.Blob[T]
}

func newSmoothL1LossGPU[T layer.Float](l *smoothL1LossLayer[T]) layer.Engine[T] {
	return &smoothL1LossGPU[T]{l: l}
}

// Forward computes the loss on the device; only the scalar comes back.
func (e *smoothL1LossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	for _, b := range []**blob.Blob[T]{&e.diff, &e.errs} {
		if err := kit.EnsureBlob(&l.Base, b); err != nil {
			return err
		}
		if err := (*b).ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	n := bottom[0].Count()
	weighted := len(bottom) == 4
	in := g.Data(bottom[0]) // unread without weights
	if weighted {
		in = g.Data(bottom[2])
	}
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(in).Int(kit.Btoi(weighted))
	kit.ScalarArg(&a, l.sigma2).Ptr(g.MutableData(e.diff)).Ptr(g.MutableData(e.errs))
	if err := launch[T](l.Context(), "smooth_l1_loss.cu", "smooth_l1_forward", n, &a); err != nil {
		return err
	}
	var loss T
	if weighted { // the outside weights may be of either sign
		loss = g.Dot(n, g.Data(e.errs), g.Data(bottom[3]))
	} else {
		loss = g.Asum(n, g.Data(e.errs))
	}
	if err := g.Err(); err != nil {
		return err
	}
	top[0].MutableCPUData()[0] = loss / T(bottom[0].Shape()[0])
	return nil
}

// Backward computes the prediction's and the target's gradients.
func (e *smoothL1LossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	w := top[0].CPUDiff()[0]
	n := bottom[0].Count()
	weighted := len(bottom) == 4
	in, out := g.Data(e.diff), g.Data(e.diff)
	if weighted {
		in, out = g.Data(bottom[2]), g.Data(bottom[3])
	}
	for k, sign := range []T{1, -1} {
		if !propagateDown[k] {
			continue
		}
		var a cuda.Args
		a.Int(n).Ptr(g.Data(e.diff)).Ptr(in).Ptr(out).Int(kit.Btoi(weighted))
		kit.ScalarArg(&a, l.sigma2)
		kit.ScalarArg(&a, sign*w/T(bottom[k].Shape()[0])).Ptr(g.MutableDiff(bottom[k]))
		if err := launch[T](l.Context(), "smooth_l1_loss.cu", "smooth_l1_backward", n, &a); err != nil {
			return err
		}
	}
	return nil
}
