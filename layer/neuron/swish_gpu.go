package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// swishGPU is Swish's GPU half.
type swishGPU[T layer.Float] struct{ l *swishLayer[T] }

func newSwishGPU[T layer.Float](l *swishLayer[T]) layer.Engine[T] { return swishGPU[T]{l} }

// Forward computes the activation on the device, keeping the sigmoid
// for the backward pass.
func (e swishGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if l.sigBlob == nil {
		var err error
		if l.sigBlob, err = l.NewBlob(); err != nil {
			return err
		}
	}
	if err := l.sigBlob.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0])).Ptr(g.MutableData(l.sigBlob))
	return launch[T](l.Context(), "swish.cu", "swish_forward", n, kit.ScalarArg(&a, l.beta))
}

// Backward computes the bottom's gradient on the device.
func (e swishGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(top[0])).Ptr(g.Data(l.sigBlob)).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "swish.cu", "swish_backward", n, kit.ScalarArg(&a, l.beta))
}
