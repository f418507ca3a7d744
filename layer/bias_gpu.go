package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU adds the bias on the device.
func (l *Bias[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return biasLayerForward[T](l, gpuBroadcasterOf(&l.Base), bottom, top)
}

// BackwardGPU computes the gradients on the device.
func (l *Bias[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return biasLayerBackward[T](l, gpuBroadcasterOf(&l.Base), top, propagateDown, bottom)
}
