package layer

import "github.com/gocaffe/gocaffe/blob"

// innerProductGPU is InnerProduct's GPU half.
type innerProductGPU[T Float] struct{ l *InnerProduct[T] }

func newInnerProductGPU[T Float](l *InnerProduct[T]) Engine[T] { return innerProductGPU[T]{l} }

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
