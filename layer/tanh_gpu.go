package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// tanhGPU is TanH's GPU half.
type tanhGPU[T Float] struct{ l *TanH[T] }

func newTanHGPU[T Float](l *TanH[T]) Engine[T] { return tanhGPU[T]{l} }

// Forward computes the hyperbolic tangent on the device.
func (e tanhGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "tanh.cu", "tanh_forward", n, &a)
}

// Backward computes the bottom's gradient from the top on the device.
func (e tanhGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "tanh.cu", "tanh_backward", n, &a)
}
