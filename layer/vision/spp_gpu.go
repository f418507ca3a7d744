package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// sppGPU is SPP's GPU half.
type sppGPU[T layer.Float] struct{ l *sppLayer[T] }

func newSPPGPU[T layer.Float](l *sppLayer[T]) layer.Engine[T] { return sppGPU[T]{l} }

// Forward pools every level on the device and concatenates there.
func (e sppGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return sppForward[T](l, l.GPU(), bottom, top)
}

// Backward runs the levels' backward passes and sums on the device.
func (e sppGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return sppBackward[T](l, l.GPU(), top, propagateDown, bottom)
}
