package layer

import "github.com/gocaffe/gocaffe/blob"

// reductionGPU is Reduction's GPU half.
type reductionGPU[T Float] struct{ l *Reduction[T] }

func newReductionGPU[T Float](l *Reduction[T]) Engine[T] { return reductionGPU[T]{l} }

// Forward reduces on the device.
func (e reductionGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return reductionForward[T](l, l.GPU(), bottom, top)
}

// Backward spreads the gradients on the device.
func (e reductionGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return reductionBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
