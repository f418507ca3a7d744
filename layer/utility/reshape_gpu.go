package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// reshapeGPU is Reshape's GPU half, with nothing to do on either pass (the top
// shares the bottom's data and diff, as on the host): it makes the layer
// compute "on the GPU", so that a net recording its passes in a CUDA graph
// need not stop at it.
type reshapeGPU[T layer.Float] struct{}

func newReshapeGPU[T layer.Float](*reshapeLayer[T]) layer.Engine[T] { return reshapeGPU[T]{} }

// Forward has nothing to do: the top is the bottom's data.
func (reshapeGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward has nothing to do: the top's diff is the bottom's.
func (reshapeGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
