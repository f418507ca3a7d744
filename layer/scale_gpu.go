package layer

import "github.com/gocaffe/gocaffe/blob"

func init() { registerGPU("Scale", newScaleGPU[float32], newScaleGPU[float64]) }

// scaleGPU is Scale's GPU half.
type scaleGPU[T Float] struct{ l *Scale[T] }

func newScaleGPU[T Float](l *Scale[T]) Engine[T] { return scaleGPU[T]{l} }

// Forward scales on the device.
func (e scaleGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return scaleForward[T](l, gpuBroadcasterOf(&l.Base), bottom, top)
}

// Backward computes the gradients on the device.
func (e scaleGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return scaleBackward[T](l, gpuBroadcasterOf(&l.Base), top, propagateDown, bottom)
}
