package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// eltwiseGPU is Eltwise's GPU half.
type eltwiseGPU[T layer.Float] struct {
	l   *eltwiseLayer[T]
	red kit.Reduced[T] // a 16-bit type to compute in (eltwise_reduced.go)
}

func newEltwiseGPU[T layer.Float](l *eltwiseLayer[T]) layer.Engine[T] { return &eltwiseGPU[T]{l: l} }

// Forward combines the bottoms on the device.
func (e *eltwiseGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	g := l.GPU()
	if l.fusesReLU() {
		return e.sumReLU(bottom, top)
	}
	if l.op == caffepb.EltwiseParameter_SUM {
		return e.sum(bottom, top)
	}
	if l.op != caffepb.EltwiseParameter_MAX {
		return eltwiseForward[T](l, g, bottom, top)
	}
	n := top[0].Count()
	y, mask := g.MutableData(top[0]), g.MutableData(l.mask)
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Int(1).Int(1).Ptr(y).Ptr(mask)
	if err := launch[T](l.Context(), "eltwise.cu", "eltwise_max_forward", n, &a); err != nil {
		return err
	}
	for i, b := range bottom[2:] {
		var a cuda.Args
		a.Int(n).Ptr(y).Ptr(g.Data(b)).Int(i + 2).Int(0).Ptr(y).Ptr(mask)
		if err := launch[T](l.Context(), "eltwise.cu", "eltwise_max_forward", n, &a); err != nil {
			return err
		}
	}
	return nil
}

// sum is SUM's forward: the first two bottoms in one pass (eltwise_sum2)
// where the arrays allow vectors, the others added by axpy.
func (e *eltwiseGPU[T]) sum(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	a, b, y := g.Data(bottom[0]), g.Data(bottom[1]), g.MutableData(top[0])
	if !kit.VectorAligned(a, b, y) {
		return eltwiseForward[T](l, g, bottom, top)
	}
	var args cuda.Args
	kit.ScalarArg(kit.ScalarArg(args.Int(n), l.coeffs[0]).Ptr(a), l.coeffs[1]).Ptr(b).Ptr(y)
	if err := launch[T](l.Context(), "eltwise.cu", "eltwise_sum2", kit.VectorThreads[T](n), &args); err != nil {
		return err
	}
	for i, b := range bottom[2:] {
		g.Axpy(n, l.coeffs[i+2], g.Data(b), y)
	}
	return g.Err()
}

// Backward computes the bottoms' gradients on the device.
func (e *eltwiseGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if e.red.On() {
		return e.backwardReduced(top, propagateDown, bottom)
	}
	g := l.GPU()
	if l.fusesReLU() {
		return e.sumReLUBackward(top, propagateDown, bottom)
	}
	if l.op != caffepb.EltwiseParameter_MAX {
		return eltwiseBackward[T](l, g, top, propagateDown, bottom)
	}
	n := top[0].Count()
	dy, mask := g.Diff(top[0]), g.Data(l.mask)
	for i, b := range bottom {
		if !propagateDown[i] {
			continue
		}
		var a cuda.Args
		a.Int(n).Ptr(dy).Ptr(mask).Int(i).Ptr(g.MutableDiff(b))
		if err := launch[T](l.Context(), "eltwise.cu", "eltwise_max_backward", n, &a); err != nil {
			return err
		}
	}
	return nil
}

// fusesReLU says whether the GPU passes compute the ReLU in place on the
// top too: a SUM of two bottoms (Fuse).
func (l *eltwiseLayer[T]) fusesReLU() bool {
	return l.relu != nil && !l.FusionSuspended() && l.op == caffepb.EltwiseParameter_SUM && len(l.coeffs) == 2
}

// sumReLUKernel names the fused kernel for the arrays and the threads it
// wants over n elements: over 16-byte vectors where all are aligned to 16
// bytes.
func sumReLUKernel[T layer.Float](name string, n int, ps ...cuda.DevicePtr) (string, int) {
	if kit.VectorAligned(ps...) {
		return name + "_vec", kit.VectorThreads[T](n)
	}
	return name, n
}

// sumReLU is SUM's forward with the ReLU applied in the same pass.
func (e *eltwiseGPU[T]) sumReLU(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	a, b, y := g.Data(bottom[0]), g.Data(bottom[1]), g.MutableData(top[0])
	if err := g.Err(); err != nil {
		return err
	}
	var args cuda.Args
	kit.ScalarArg(kit.ScalarArg(args.Int(n), l.coeffs[0]).Ptr(a), l.coeffs[1]).Ptr(b)
	kit.ScalarArg(&args, l.reluSlope).Ptr(y)
	name, threads := sumReLUKernel[T]("eltwise_sum2_relu", n, a, b, y)
	return launch[T](l.Context(), "eltwise.cu", name, threads, &args)
}

// sumReLUBackward masks the top's diff by the ReLU's gradient, in place
// as Caffe's ReLU does, and gives each bottom coeff times it, in one pass.
func (e *eltwiseGPU[T]) sumReLUBackward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	y, dy := g.Data(top[0]), g.MutableDiff(top[0])
	var dx [2]cuda.DevicePtr
	for i := range dx {
		if propagateDown[i] {
			dx[i] = g.MutableDiff(bottom[i])
		}
	}
	if err := g.Err(); err != nil {
		return err
	}
	var args cuda.Args
	kit.ScalarArg(args.Int(n).Ptr(y), l.reluSlope)
	kit.ScalarArg(kit.ScalarArg(&args, l.coeffs[0]), l.coeffs[1]).Ptr(dy).Ptr(dx[0]).Ptr(dx[1])
	name, threads := sumReLUKernel[T]("eltwise_sum2_relu_backward", n, y, dy, dx[0], dx[1])
	return launch[T](l.Context(), "eltwise.cu", name, threads, &args)
}

// FuseNext lets the GPU engine of a SUM of two bottoms apply a ReLU in
// place on the top (ResNet's residual additions): one pass forward instead
// of two, one backward instead of two. The ReLU's gradient is taken from
// y, the ReLU's bottom in place as in Caffe, so any slope is fused. The
// host's passes fuse a ReLU of slope 0 (eltwiseSumHost), in nets that run
// backward (a forward-only one has the inference paths' own fusions).
func (l *eltwiseLayer[T]) FuseNext(next, via layer.Layer[T], needBackward bool) bool {
	if !needBackward || via != layer.Layer[T](l) || l.op != caffepb.EltwiseParameter_SUM || len(l.coeffs) != 2 {
		return false
	}
	if _, ok := l.Engine().(*eltwiseGPU[T]); !ok {
		host := !l.EngineOnGPU() && !next.LayerBase().EngineOnGPU() && next.Type() == "ReLU" &&
			next.LayerBase().Param().GetReluParam().GetNegativeSlope() == 0
		if !host {
			return false
		}
	}
	l.relu, l.reluSlope = next, T(next.LayerBase().Param().GetReluParam().GetNegativeSlope())
	next.LayerBase().FusedInto(l, l.fusesReLU, false)
	return true
}
