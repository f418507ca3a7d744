package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// absValGPU is AbsVal's GPU half.
type absValGPU[T layer.Float] struct{ l *absValLayer[T] }

func newAbsValGPU[T layer.Float](l *absValLayer[T]) layer.Engine[T] { return absValGPU[T]{l} }

// Forward computes the absolute value on the device.
func (e absValGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "absval.cu", "absval_forward", n, &a)
}

// Backward computes sign(x) * dy on the device.
func (e absValGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "absval.cu", "absval_backward", n, &a)
}
