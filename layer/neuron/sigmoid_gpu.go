package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// sigmoidGPU is Sigmoid's GPU half.
type sigmoidGPU[T layer.Float] struct{ l *sigmoidLayer[T] }

func newSigmoidGPU[T layer.Float](l *sigmoidLayer[T]) layer.Engine[T] { return sigmoidGPU[T]{l} }

// Forward computes the sigmoid on the device.
func (e sigmoidGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "sigmoid.cu", "sigmoid_forward", n, &a)
}

// Backward computes the bottom's gradient from the top on the device.
func (e sigmoidGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "sigmoid.cu", "sigmoid_backward", n, &a)
}
