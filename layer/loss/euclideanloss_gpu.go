package loss

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// euclideanLossGPU is EuclideanLoss's GPU half.
type euclideanLossGPU[T layer.Float] struct{ l *euclideanLossLayer[T] }

func newEuclideanLossGPU[T layer.Float](l *euclideanLossLayer[T]) layer.Engine[T] {
	return euclideanLossGPU[T]{l}
}

// Forward computes the loss on the device (only the scalar comes back).
func (e euclideanLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return euclideanForward[T](l, l.GPU(), bottom, top)
}

// Backward computes the gradients on the device.
func (e euclideanLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return euclideanBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
