package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// eluGPU is ELU's GPU half.
type eluGPU[T layer.Float] struct{ l *eluLayer[T] }

func newELUGPU[T layer.Float](l *eluLayer[T]) layer.Engine[T] { return eluGPU[T]{l} }

// Forward computes the activation on the device.
func (e eluGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "elu.cu", "elu_forward", n, kit.ScalarArg(&a, l.alpha))
}

// Backward computes the bottom's gradient on the device.
func (e eluGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(top[0])).Ptr(g.Data(bottom[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "elu.cu", "elu_backward", n, kit.ScalarArg(&a, l.alpha))
}
