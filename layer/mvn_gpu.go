package layer

import "github.com/gocaffe/gocaffe/blob"

// mvnGPU is MVN's GPU half.
type mvnGPU[T Float] struct{ l *MVN[T] }

func newMVNGPU[T Float](l *MVN[T]) Engine[T] { return mvnGPU[T]{l} }

// Forward normalises on the device.
func (e mvnGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return mvnForward[T](l, l.GPU(), bottom, top)
}

// Backward computes the gradient on the device.
func (e mvnGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return mvnBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
