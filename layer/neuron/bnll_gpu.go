package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// bnllGPU is BNLL's GPU half.
type bnllGPU[T layer.Float] struct{ l *bnllLayer[T] }

func newBNLLGPU[T layer.Float](l *bnllLayer[T]) layer.Engine[T] { return bnllGPU[T]{l} }

// Forward computes the softplus on the device.
func (e bnllGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "bnll.cu", "bnll_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e bnllGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(l.input.input(bottom[0], top[0]))).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "bnll.cu", "bnll_backward", n, &a)
}
