package layer

import "github.com/gocaffe/gocaffe/blob"

// deconvolutionGPU is Deconvolution's GPU half.
type deconvolutionGPU[T Float] struct{ l *Deconvolution[T] }

func newDeconvolutionGPU[T Float](l *Deconvolution[T]) Engine[T] { return deconvolutionGPU[T]{l} }

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
