package datalayer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// dataGPU is Data's GPU half.
type dataGPU[T layer.Float] struct{ l *dataLayer[T] }

func newDataGPU[T layer.Float](l *dataLayer[T]) layer.Engine[T] { return dataGPU[T]{l} }

// Forward copies the next batch, already pushed to the device by the
// prefetch goroutine, into the tops on the device.
func (e dataGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.forwardGPU(top) }

// Backward has nothing to do: data layers have no bottoms.
func (dataGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
