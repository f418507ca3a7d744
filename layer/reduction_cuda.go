//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU reduces on the device.
func (l *Reduction[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return reductionForward[T](l, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU spreads the gradients on the device.
func (l *Reduction[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return reductionBackward[T](l, gpuOf(&l.Base), top, propagateDown, bottom)
}
