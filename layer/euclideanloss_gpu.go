package layer

import "github.com/gocaffe/gocaffe/blob"

// euclideanLossGPU is EuclideanLoss's GPU half.
type euclideanLossGPU[T Float] struct{ l *EuclideanLoss[T] }

func newEuclideanLossGPU[T Float](l *EuclideanLoss[T]) Engine[T] { return euclideanLossGPU[T]{l} }

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
