//go:build cuda

package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU pools every level on the device and concatenates there.
func (l *SPP[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return sppForward[T](l, gpuOf(&l.Base), bottom, top)
}

// BackwardGPU runs the levels' backward passes and sums on the device.
func (l *SPP[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return sppBackward[T](l, gpuOf(&l.Base), top, propagateDown, bottom)
}
