package layer

import "github.com/gocaffe/gocaffe/blob"

// sppGPU is SPP's GPU half.
type sppGPU[T Float] struct{ l *SPP[T] }

func newSPPGPU[T Float](l *SPP[T]) Engine[T] { return sppGPU[T]{l} }

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
