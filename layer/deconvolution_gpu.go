package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

// ForwardGPU deconvolves on the device.
func (l *Deconvolution[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return deconvForward[T](&l.convBase, l.gpu(), bottom, top)
}

// BackwardGPU computes the gradients on the device.
func (l *Deconvolution[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return deconvBackward[T](&l.convBase, l.gpu(), top, propagateDown, bottom)
}
