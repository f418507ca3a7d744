//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU copies the selected items on the device (the selector is read
// on the host by Reshape, as in Caffe).
func (l *Filter[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return filterForward[T](l, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU routes the gradients on the device.
func (l *Filter[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return filterBackward[T](l, gpuOf(&l.Base), top, propagateDown, bottom)
}
