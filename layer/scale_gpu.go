package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU scales on the device.
func (l *Scale[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return scaleForward[T](l, gpuBroadcasterOf(&l.Base), bottom, top)
}

// BackwardGPU computes the gradients on the device.
func (l *Scale[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return scaleBackward[T](l, gpuBroadcasterOf(&l.Base), top, propagateDown, bottom)
}
