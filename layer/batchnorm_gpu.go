package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

// ForwardGPU normalises on the device (cuBLAS and the element-wise
// kernels of the device view).
func (l *BatchNorm[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return batchNormForward[T](l, l.gpu(), bottom, top)
}

// BackwardGPU computes the bottom's gradient on the device.
func (l *BatchNorm[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	return batchNormBackward[T](l, l.gpu(), top, bottom)
}
