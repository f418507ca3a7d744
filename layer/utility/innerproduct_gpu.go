package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// innerProductGPU is InnerProduct's GPU half: cuBLAS, in T or, once
// SetReduced, in a 16-bit type (innerproduct_reduced.go).
type innerProductGPU[T layer.Float] struct {
	l   *innerProductLayer[T]
	red kit.Reduced[T]
}

func newInnerProductGPU[T layer.Float](l *innerProductLayer[T]) layer.Engine[T] {
	return &innerProductGPU[T]{l: l}
}

// Forward computes the product with cuBLAS.
func (e *innerProductGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	l := e.l
	return innerProductForward[T](l, l.GPU(), bottom, top)
}

// Backward computes the gradients with cuBLAS.
func (e *innerProductGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if e.red.On() {
		return e.backwardReduced(top, propagateDown, bottom)
	}
	l := e.l
	return innerProductBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
