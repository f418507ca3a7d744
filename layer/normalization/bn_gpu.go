package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// bnGPU is BN's GPU half: per-channel statistics, 1/std, the normalized
// input and the gradient sums live on the device.
type bnGPU[T layer.Float] struct {
	l                             *bnLayer[T]
	mean, variance, invStd, xNorm *blob.Blob[T]
	sumDy, sumDyX                 *blob.Blob[T]
}

func newBNGPU[T layer.Float](l *bnLayer[T]) layer.Engine[T] { return &bnGPU[T]{l: l} }

func (e *bnGPU[T]) buffers(count int) error {
	l := e.l
	for _, b := range []struct {
		p **blob.Blob[T]
		n int
	}{{&e.mean, l.channels}, {&e.variance, l.channels}, {&e.invStd, l.channels}, {&e.sumDy, l.channels}, {&e.sumDyX, l.channels}, {&e.xNorm, count}} {
		if err := kit.EnsureBlob(&l.Base, b.p); err != nil {
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
	l, g := e.l, e.l.GPU()
	n := bottom[0].Count()
	if err := e.buffers(n); err != nil {
		return err
	}
	mean, variance := g.Data(l.Blobs()[2]), g.Data(l.Blobs()[3])
	training := !l.useRunning()
	if training {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(e.mean)).Ptr(g.MutableData(e.variance))
		if err := kit.LaunchBlocks[T](l.Context(), kernels, "bn.cu", "bn_stats", l.channels, &a); err != nil {
			return err
		}
		mean, variance = g.Data(e.mean), g.Data(e.variance)
	}
	runMean, runVar := mean, variance // not written without training
	if training {
		runMean, runVar = g.MutableData(l.Blobs()[2]), g.MutableData(l.Blobs()[3])
	}
	var r cuda.Args
	r.Int(l.channels).Int(kit.Btoi(training))
	kit.ScalarArg(&r, l.momentum)
	kit.ScalarArg(&r, l.eps).Ptr(mean).Ptr(variance).Ptr(runMean).Ptr(runVar).Ptr(g.MutableData(e.invStd))
	if err := launch[T](l.Context(), "bn.cu", "bn_running", l.channels, &r); err != nil {
		return err
	}
	var f cuda.Args
	f.Int(n).Int(l.channels).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(mean).Ptr(g.Data(e.invStd)).
		Ptr(g.Data(l.Blobs()[0])).Ptr(g.Data(l.Blobs()[1])).Ptr(g.MutableData(e.xNorm)).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "bn.cu", "bn_forward", n, &f)
}

// Backward accumulates the slope's and bias's gradients and computes the
// bottom's on the device.
func (e *bnGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	n := top[0].Count()
	running := l.useRunning()
	if !running {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Ptr(g.Diff(top[0])).Ptr(g.Data(e.xNorm)).
			Ptr(g.MutableData(e.sumDy)).Ptr(g.MutableData(e.sumDyX))
		if err := kit.LaunchBlocks[T](l.Context(), kernels, "bn.cu", "bn_grad_sums", l.channels, &a); err != nil {
			return err
		}
		if l.ParamPropagateDown(0) {
			g.Axpy(l.channels, 1, g.Data(e.sumDyX), g.MutableDiff(l.Blobs()[0]))
		}
		if l.ParamPropagateDown(1) {
			g.Axpy(l.channels, 1, g.Data(e.sumDy), g.MutableDiff(l.Blobs()[1]))
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
	kit.ScalarArg(&b, T(l.num*l.spatial)).Int(kit.Btoi(running)).Ptr(g.Diff(top[0])).Ptr(g.Data(e.xNorm)).Ptr(g.Data(l.Blobs()[0])).
		Ptr(g.Data(e.invStd)).Ptr(g.Data(e.sumDy)).Ptr(g.Data(e.sumDyX)).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "bn.cu", "bn_backward", n, &b)
}
