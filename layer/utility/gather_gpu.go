package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// gatherGPU is Gather's GPU half, with nothing to do on either pass (each
// top shares its bottom's data and diff, as on the host): it makes the
// layer compute "on the GPU", so that a net recording its passes in a
// CUDA graph need not stop at it.
type gatherGPU[T layer.Float] struct{}

func newGatherGPU[T layer.Float](*gatherLayer[T]) layer.Engine[T] { return gatherGPU[T]{} }

// Forward has nothing to do: each top is its bottom's data.
func (gatherGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward has nothing to do: each top's diff is its bottom's.
func (gatherGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
