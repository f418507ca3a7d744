//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU runs im2col on the device.
func (l *Im2col[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return im2colForward[T](l, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU runs col2im on the device.
func (l *Im2col[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return im2colBackward[T](l, gpuOf(&l.Base), top, propagateDown, bottom)
}
