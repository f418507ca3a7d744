package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// expGPU is Exp's GPU half.
type expGPU[T layer.Float] struct{ l *expLayer[T] }

func newExpGPU[T layer.Float](l *expLayer[T]) layer.Engine[T] { return expGPU[T]{l} }

// Forward computes the exponential on the device.
func (e expGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	kit.ScalarArg(kit.ScalarArg(&a, T(l.inner)), T(l.outer))
	return launch[T](l.Context(), "exp.cu", "exp_forward", n, &a)
}

// Backward computes the bottom's gradient from the top on the device.
func (e expGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "exp.cu", "exp_backward", n, kit.ScalarArg(&a, T(l.inner)))
}
