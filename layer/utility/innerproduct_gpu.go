package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// innerProductGPU is InnerProduct's GPU half.
type innerProductGPU[T layer.Float] struct{ l *innerProductLayer[T] }

func newInnerProductGPU[T layer.Float](l *innerProductLayer[T]) layer.Engine[T] {
	return innerProductGPU[T]{l}
}

// Forward computes the product with cuBLAS.
func (e innerProductGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return innerProductForward[T](l, l.GPU(), bottom, top)
}

// Backward computes the gradients with cuBLAS.
func (e innerProductGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return innerProductBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
