package datalayer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// imageDataGPU is ImageData's GPU half.
type imageDataGPU[T layer.Float] struct{ l *imageDataLayer[T] }

func newImageDataGPU[T layer.Float](l *imageDataLayer[T]) layer.Engine[T] { return imageDataGPU[T]{l} }

// Forward copies the next batch, already pushed to the device by the
// prefetch goroutine, into the tops on the device.
func (e imageDataGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.forwardGPU(top) }

// Backward has nothing to do: data layers have no bottoms.
func (imageDataGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
