package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// mvnGPU is MVN's GPU half.
type mvnGPU[T layer.Float] struct{ l *mvnLayer[T] }

func newMVNGPU[T layer.Float](l *mvnLayer[T]) layer.Engine[T] { return mvnGPU[T]{l} }

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
