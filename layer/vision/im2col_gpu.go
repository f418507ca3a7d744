package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// im2colGPU is Im2col's GPU half.
type im2colGPU[T layer.Float] struct{ l *im2colLayer[T] }

func newIm2colGPU[T layer.Float](l *im2colLayer[T]) layer.Engine[T] { return im2colGPU[T]{l} }

// Forward runs im2col on the device.
func (e im2colGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return im2colForward[T](l, l.GPU(), bottom, top)
}

// Backward runs col2im on the device.
func (e im2colGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return im2colBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
