package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// filterGPU is Filter's GPU half.
type filterGPU[T layer.Float] struct{ l *filterLayer[T] }

func newFilterGPU[T layer.Float](l *filterLayer[T]) layer.Engine[T] { return filterGPU[T]{l} }

// Forward copies the selected items on the device (the selector is read
// on the host by Reshape, as in Caffe).
func (e filterGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return filterForward[T](l, l.GPU(), bottom, top)
}

// Backward routes the gradients on the device.
func (e filterGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return filterBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
