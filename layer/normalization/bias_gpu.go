package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// biasGPU is Bias's GPU half.
type biasGPU[T layer.Float] struct{ l *biasLayer[T] }

func newBiasGPU[T layer.Float](l *biasLayer[T]) layer.Engine[T] { return biasGPU[T]{l} }

// Forward adds the bias on the device.
func (e biasGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return biasLayerForward[T](l, kit.GPUBroadcasterOf(&l.Base), bottom, top)
}

// Backward computes the gradients on the device.
func (e biasGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return biasLayerBackward[T](l, kit.GPUBroadcasterOf(&l.Base), top, propagateDown, bottom)
}
