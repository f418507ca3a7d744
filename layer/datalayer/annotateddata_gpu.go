package datalayer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// annotatedDataGPU is AnnotatedData's GPU half.
type annotatedDataGPU[T layer.Float] struct{ l *annotatedDataLayer[T] }

func newAnnotatedDataGPU[T layer.Float](l *annotatedDataLayer[T]) layer.Engine[T] {
	return annotatedDataGPU[T]{l}
}

// Forward hands the tops the next batch, already pushed to the device by
// the prefetch goroutine (its label rows too, however many there are).
func (e annotatedDataGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.forwardGPU(top) }

// Backward has nothing to do: data layers have no bottoms.
func (annotatedDataGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
