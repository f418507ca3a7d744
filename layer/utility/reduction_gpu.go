package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// reductionGPU is Reduction's GPU half.
type reductionGPU[T layer.Float] struct{ l *reductionLayer[T] }

func newReductionGPU[T layer.Float](l *reductionLayer[T]) layer.Engine[T] { return reductionGPU[T]{l} }

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
