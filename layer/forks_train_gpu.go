package layer

import (
	"slices"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// The GPU halves of the forks' layers that training nets run in their
// middle: Faster R-CNN's SmoothL1Loss, SegNet's Upsample, PSPNet's Interp
// and TSN's BN. Their kernels are in kernels/forks_train.cu.

func init() {
	registerGPU("SmoothL1Loss", newSmoothL1LossGPU[float32], newSmoothL1LossGPU[float64])
	registerGPU("Upsample", newUpsampleGPU[float32], newUpsampleGPU[float64])
	registerGPU("Interp", newInterpGPU[float32], newInterpGPU[float64])
	registerGPU("BN", newBNGPU[float32], newBNGPU[float64])
}

const forksTrainCU = "forks_train.cu"

// launchBlocks runs kernel name with one block of threadsPerBlock threads
// per group (the kernels that reduce a channel in shared memory).
func launchBlocks[T Float](l *Base[T], name string, groups int, args *cuda.Args) error {
	if groups == 0 {
		return nil
	}
	f, err := kernel[T](l.ctx, forksTrainCU, name)
	if err != nil {
		return err
	}
	return f.Launch(cuda.Dim3{X: groups}, cuda.Dim3{X: threadsPerBlock}, 0, nil, args)
}

// smoothL1LossGPU is SmoothL1Loss's GPU half; diff holds w_in * (a - b),
// errs each element's loss before the outside weight.
type smoothL1LossGPU[T Float] struct {
	l          *SmoothL1Loss[T]
	diff, errs *blob.Blob[T]
}

func newSmoothL1LossGPU[T Float](l *SmoothL1Loss[T]) Engine[T] { return &smoothL1LossGPU[T]{l: l} }

// Forward computes the loss on the device; only the scalar comes back.
func (e *smoothL1LossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	for _, b := range []**blob.Blob[T]{&e.diff, &e.errs} {
		if err := ensureBlob(&l.Base, b); err != nil {
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
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(in).Int(b2i(weighted))
	scalarArg(&a, l.sigma2).Ptr(g.MutableData(e.diff)).Ptr(g.MutableData(e.errs))
	if err := launch[T](l.ctx, forksTrainCU, "smooth_l1_forward", n, &a); err != nil {
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
	l, g := e.l, e.l.gpu()
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
		a.Int(n).Ptr(g.Data(e.diff)).Ptr(in).Ptr(out).Int(b2i(weighted))
		scalarArg(&a, l.sigma2)
		scalarArg(&a, sign*w/T(bottom[k].Shape()[0])).Ptr(g.MutableDiff(bottom[k]))
		if err := launch[T](l.ctx, forksTrainCU, "smooth_l1_backward", n, &a); err != nil {
			return err
		}
	}
	return nil
}

// upsampleGPU is Upsample's GPU half. Positions outside the output plane
// (which the CPU half reports as an error) are skipped on the device,
// where checking them would cost a synchronisation.
type upsampleGPU[T Float] struct{ l *Upsample[T] }

func newUpsampleGPU[T Float](l *Upsample[T]) Engine[T] { return upsampleGPU[T]{l} }

// Forward scatters the values to their positions on the device.
func (e upsampleGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	g.Set(top[0].Count(), 0, g.MutableData(top[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(bottom[0].CountFrom(2)).Int(l.h * l.w).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, forksTrainCU, "upsample_forward", n, &a)
}

// Backward gathers the gradients from the positions on the device.
func (e upsampleGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(bottom[0].CountFrom(2)).Int(l.h * l.w).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, forksTrainCU, "upsample_backward", n, &a)
}

// interpGPU is Interp's GPU half; rows and cols hold the layer's taps
// (first index, step, weight) on the device, uploaded when they change.
type interpGPU[T Float] struct {
	l               *Interp[T]
	rows, cols      *blob.Blob[T]
	rowTaps, colTap []interpTap // what rows and cols hold
}

func newInterpGPU[T Float](l *Interp[T]) Engine[T] { return &interpGPU[T]{l: l} }

// taps uploads the layer's taps if they changed since the last pass.
func (e *interpGPU[T]) taps() error {
	l := e.l
	for _, t := range []struct {
		b    **blob.Blob[T]
		have *[]interpTap
		want []interpTap
	}{{&e.rows, &e.rowTaps, l.rowWeights}, {&e.cols, &e.colTap, l.colWeights}} {
		if *t.b != nil && slices.Equal(*t.have, t.want) {
			continue
		}
		if err := ensureBlob(&l.Base, t.b); err != nil {
			return err
		}
		if err := (*t.b).Reshape([]int{3 * len(t.want)}); err != nil {
			return err
		}
		v := (*t.b).MutableCPUData()
		for i, tap := range t.want {
			v[3*i], v[3*i+1], v[3*i+2] = T(tap.at), T(tap.step), T(tap.weight)
		}
		*t.have = append((*t.have)[:0], t.want...)
	}
	return nil
}

func (e *interpGPU[T]) args(a *cuda.Args, n int) *cuda.Args {
	l, g := e.l, e.l.gpu()
	return a.Int(n).Int(l.inH).Int(l.inW).Int(l.outH).Int(l.outW).Ptr(g.Data(e.rows)).Ptr(g.Data(e.cols))
}

// Forward interpolates on the device.
func (e *interpGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	if err := e.taps(); err != nil {
		return err
	}
	n := l.planes * l.outH * l.outW
	var a cuda.Args
	e.args(&a, n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, forksTrainCU, "interp_forward", n, &a)
}

// Backward spreads each output's gradient over its four sources on the
// device (atomically: sources are shared).
func (e *interpGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.gpu()
	if err := e.taps(); err != nil {
		return err
	}
	g.Set(bottom[0].Count(), 0, g.MutableDiff(bottom[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := l.planes * l.outH * l.outW
	var a cuda.Args
	e.args(&a, n).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, forksTrainCU, "interp_backward", n, &a)
}

// bnGPU is BN's GPU half: per-channel statistics, 1/std, the normalized
// input and the gradient sums live on the device.
type bnGPU[T Float] struct {
	l                             *BN[T]
	mean, variance, invStd, xNorm *blob.Blob[T]
	sumDy, sumDyX                 *blob.Blob[T]
}

func newBNGPU[T Float](l *BN[T]) Engine[T] { return &bnGPU[T]{l: l} }

func (e *bnGPU[T]) buffers(count int) error {
	l := e.l
	for _, b := range []struct {
		p **blob.Blob[T]
		n int
	}{{&e.mean, l.channels}, {&e.variance, l.channels}, {&e.invStd, l.channels}, {&e.sumDy, l.channels}, {&e.sumDyX, l.channels}, {&e.xNorm, count}} {
		if err := ensureBlob(&l.Base, b.p); err != nil {
			return err
		}
		if err := (*b.p).Reshape([]int{b.n}); err != nil {
			return err
		}
	}
	return nil
}

// Forward normalizes with the batch's statistics (updating the running
// ones) or the running ones, then scales and shifts, on the device.
func (e *bnGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	n := bottom[0].Count()
	if err := e.buffers(n); err != nil {
		return err
	}
	mean, variance := g.Data(l.blobs[2]), g.Data(l.blobs[3])
	training := !l.useRunning()
	if training {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(e.mean)).Ptr(g.MutableData(e.variance))
		if err := launchBlocks[T](&l.Base, "bn_stats", l.channels, &a); err != nil {
			return err
		}
		mean, variance = g.Data(e.mean), g.Data(e.variance)
	}
	runMean, runVar := mean, variance // not written without training
	if training {
		runMean, runVar = g.MutableData(l.blobs[2]), g.MutableData(l.blobs[3])
	}
	var r cuda.Args
	r.Int(l.channels).Int(b2i(training))
	scalarArg(&r, l.momentum)
	scalarArg(&r, l.eps).Ptr(mean).Ptr(variance).Ptr(runMean).Ptr(runVar).Ptr(g.MutableData(e.invStd))
	if err := launch[T](l.ctx, forksTrainCU, "bn_running", l.channels, &r); err != nil {
		return err
	}
	var f cuda.Args
	f.Int(n).Int(l.channels).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(mean).Ptr(g.Data(e.invStd)).
		Ptr(g.Data(l.blobs[0])).Ptr(g.Data(l.blobs[1])).Ptr(g.MutableData(e.xNorm)).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, forksTrainCU, "bn_forward", n, &f)
}

// Backward accumulates the slope's and bias's gradients and computes the
// bottom's on the device.
func (e *bnGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	n := top[0].Count()
	running := l.useRunning()
	if !running {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Ptr(g.Diff(top[0])).Ptr(g.Data(e.xNorm)).
			Ptr(g.MutableData(e.sumDy)).Ptr(g.MutableData(e.sumDyX))
		if err := launchBlocks[T](&l.Base, "bn_grad_sums", l.channels, &a); err != nil {
			return err
		}
		if l.ParamPropagateDown(0) {
			g.Axpy(l.channels, 1, g.Data(e.sumDyX), g.MutableDiff(l.blobs[0]))
		}
		if l.ParamPropagateDown(1) {
			g.Axpy(l.channels, 1, g.Data(e.sumDy), g.MutableDiff(l.blobs[1]))
		}
		if err := g.Err(); err != nil {
			return err
		}
	}
	if !propagateDown[0] {
		return nil
	}
	var b cuda.Args
	b.Int(n).Int(l.channels).Int(l.spatial)
	scalarArg(&b, T(l.num*l.spatial)).Int(b2i(running)).Ptr(g.Diff(top[0])).Ptr(g.Data(e.xNorm)).Ptr(g.Data(l.blobs[0])).
		Ptr(g.Data(e.invStd)).Ptr(g.Data(e.sumDy)).Ptr(g.Data(e.sumDyX)).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, forksTrainCU, "bn_backward", n, &b)
}
