package net

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

// Loss scaling multiplies the gradient that backward passes start from,
// the loss tops' diffs, by a factor S, so that small gradients stay
// representable in reduced precision; the solver divides the parameters'
// gradients by S again before it uses them. Layers store a loss top's
// weight w in its diff once, at SetUp, and Forward computes the loss as
// the dot product of the top's data and diff (Caffe's SetLossWeights), so
// the diff cannot hold w·S for good: BackwardFromTo writes w·S into the
// loss tops of the layers it runs before their backward passes and w back
// after them. Nothing else reads a loss top's diff. A blob with a loss
// weight that other layers also read has a Split above it (InsertSplits),
// whose own top carries the weight, so each loss diff belongs to one
// backward pass.
//
// NVCaffe applies its global_grad_scale inside SoftmaxWithLoss and
// SigmoidCrossEntropyLoss only, and divides every gradient by it, so its
// other losses' gradients come out divided by the scale; scaling the diffs
// the backward pass starts from scales every loss alike.

// SetLossScale sets the factor S by which backward passes multiply the
// gradient of the loss (loss scaling): the parameters' and blobs' diffs a
// Backward leaves are S times the loss's true gradient. Forward's loss is
// not scaled. S = 1, the default, leaves Backward as Caffe's; a solver sets
// S from its LossScale option or the net's global_grad_scale
// (GlobalGradScale) and divides the gradients by it before the update.
func (n *Net[T]) SetLossScale(s float64) error {
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("net %q: loss scale %v: it must be positive and finite", n.name, s)
	}
	if T(s) == 0 || math.IsInf(float64(T(s)), 0) {
		return fmt.Errorf("net %q: loss scale %v does not fit the net's %T", n.name, s, T(0))
	}
	n.lossScale = s
	return nil
}

// LossScale returns the factor backward passes multiply the loss's
// gradient by (SetLossScale), 1 unless set.
func (n *Net[T]) LossScale() float64 {
	if n.lossScale == 0 {
		return 1
	}
	return n.lossScale
}

// GlobalGradScale returns NVCaffe's loss scaling fields of the net's
// parameter: global_grad_scale (1 unless set) and
// global_grad_scale_adaptive.
func (n *Net[T]) GlobalGradScale() (scale float32, adaptive bool) {
	return n.gradScale, n.gradScaleAdaptive
}

// scaleLossDiffs writes w·scale into the diff of every loss top of layers
// lo to hi, where w is the top's loss weight: scale S before their
// backward passes, 1 after. On a GPU net the diffs are written on the
// device, where the backward passes read them, so a CUDA graph of the
// passes records the writes too.
func (n *Net[T]) scaleLossDiffs(lo, hi int, scale float64) (err error) {
	defer device.Recover(&err)
	if n.ctx.OnGPU() {
		if n.lossView == nil {
			if n.lossView, err = device.NewGPUView[T](n.ctx); err != nil {
				return err
			}
		}
		n.lossView.ResetErr()
	}
	for i := lo; i <= hi; i++ {
		r := &n.layers[i]
		b := r.layer.LayerBase()
		for j, top := range r.tops {
			w := b.Loss(j)
			if w == 0 {
				continue
			}
			v := T(float64(w) * scale)
			if n.lossView != nil {
				n.lossView.Set(top.Count(), v, n.lossView.MutableDiff(top))
			} else {
				mathfn.Set(top.Count(), v, top.MutableCPUDiff())
			}
		}
	}
	if n.lossView != nil {
		return n.lossView.Err()
	}
	return nil
}
