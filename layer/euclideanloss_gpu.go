package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

// ForwardGPU computes the loss on the device (only the scalar comes back).
func (l *EuclideanLoss[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return euclideanForward[T](l, l.gpu(), bottom, top)
}

// BackwardGPU computes the gradients on the device.
func (l *EuclideanLoss[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return euclideanBackward[T](l, l.gpu(), top, propagateDown, bottom)
}
