package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// flattenGPU is Flatten's GPU half, with nothing to do on either pass (the top
// shares the bottom's data and diff, as on the host): it makes the layer
// compute "on the GPU", so that a net recording its passes in a CUDA graph
// need not stop at it.
type flattenGPU[T layer.Float] struct{}

func newFlattenGPU[T layer.Float](*flattenLayer[T]) layer.Engine[T] { return flattenGPU[T]{} }

// Forward has nothing to do: the top is the bottom's data.
func (flattenGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward has nothing to do: the top's diff is the bottom's.
func (flattenGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
