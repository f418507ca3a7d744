package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// deconvolutionGPU is Deconvolution's GPU half.
type deconvolutionGPU[T layer.Float] struct{ l *deconvolutionLayer[T] }

func newDeconvolutionGPU[T layer.Float](l *deconvolutionLayer[T]) layer.Engine[T] {
	return deconvolutionGPU[T]{l}
}

// Forward deconvolves on the device.
func (e deconvolutionGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return convForward[T](&l.convBase, l.GPU(), bottom, top)
}

// Backward computes the gradients on the device.
func (e deconvolutionGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return convBackward[T](&l.convBase, l.GPU(), top, propagateDown, bottom)
}
