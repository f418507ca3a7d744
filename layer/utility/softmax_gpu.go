package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// softmaxGPU is Softmax's GPU half.
type softmaxGPU[T layer.Float] struct{ l *softmaxLayer[T] }

func newSoftmaxGPU[T layer.Float](l *softmaxLayer[T]) layer.Engine[T] { return softmaxGPU[T]{l} }

// Forward runs one thread per (outer, inner) position over its channels.
func (e softmaxGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	var a cuda.Args
	n := l.outer * l.inner
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "softmax.cu", "softmax_forward", n, &a)
}

// Backward computes the gradient, one thread per position.
func (e softmaxGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	var a cuda.Args
	n := l.outer * l.inner
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.Data(top[0])).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "softmax.cu", "softmax_backward", n, &a)
}
