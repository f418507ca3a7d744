package layer

import "github.com/gocaffe/gocaffe/blob"

func init() { registerGPU("Scale", newScaleGPU[float32], newScaleGPU[float64]) }

// scaleGPU is Scale's GPU half.
type scaleGPU[T Float] struct{ *Scale[T] }

func newScaleGPU[T Float](l *Scale[T]) Engine[T] { return scaleGPU[T]{l} }

// Forward scales on the device.
func (l scaleGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	return scaleForward[T](l.Scale, gpuBroadcasterOf(&l.Base), bottom, top)
}

// Backward computes the gradients on the device.
func (l scaleGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return scaleBackward[T](l.Scale, gpuBroadcasterOf(&l.Base), top, propagateDown, bottom)
}
