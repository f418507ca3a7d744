package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// logGPU is Log's GPU half.
type logGPU[T layer.Float] struct{ l *logLayer[T] }

func newLogGPU[T layer.Float](l *logLayer[T]) layer.Engine[T] { return logGPU[T]{l} }

// Forward computes the logarithm on the device.
func (e logGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, T(l.scale)), T(l.shift)), T(l.baseScale))
	return launch[T](l.Context(), "log.cu", "log_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e logGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(l.input.input(bottom[0], top[0]))).Ptr(g.MutableDiff(bottom[0]))
	kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, T(l.scale)), T(l.shift)), T(l.backScale))
	return launch[T](l.Context(), "log.cu", "log_backward", n, &a)
}
