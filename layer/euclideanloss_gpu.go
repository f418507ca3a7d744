package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

func init() { registerGPU("EuclideanLoss", newEuclideanLossGPU[float32], newEuclideanLossGPU[float64]) }

// euclideanLossGPU is EuclideanLoss's GPU half.
type euclideanLossGPU[T Float] struct{ *EuclideanLoss[T] }

func newEuclideanLossGPU[T Float](l *EuclideanLoss[T]) Engine[T] { return euclideanLossGPU[T]{l} }

// Forward computes the loss on the device (only the scalar comes back).
func (l euclideanLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	return euclideanForward[T](l.EuclideanLoss, l.gpu(), bottom, top)
}

// Backward computes the gradients on the device.
func (l euclideanLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return euclideanBackward[T](l.EuclideanLoss, l.gpu(), top, propagateDown, bottom)
}
