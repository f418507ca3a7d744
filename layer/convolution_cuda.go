//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU convolves on the device (im2col kernels and cuBLAS).
func (l *Convolution[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return convForward[T](&l.convBase, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU computes the gradients on the device.
func (l *Convolution[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return convBackward[T](&l.convBase, gpuOf(&l.Base), top, propagateDown, bottom)
}
