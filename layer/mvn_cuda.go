//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU normalises on the device.
func (l *MVN[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return mvnForward[T](l, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU computes the gradient on the device.
func (l *MVN[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return mvnBackward[T](l, gpuOf(&l.Base), top, propagateDown, bottom)
}
