package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// batchNormGPU is BatchNorm's GPU half.
type batchNormGPU[T layer.Float] struct{ l *batchNormLayer[T] }

func newBatchNormGPU[T layer.Float](l *batchNormLayer[T]) layer.Engine[T] { return batchNormGPU[T]{l} }

// Forward normalises on the device (cuBLAS and the element-wise
// kernels of the device view).
func (e batchNormGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return batchNormForward[T](l, l.GPU(), bottom, top)
}

// Backward computes the bottom's gradient on the device.
func (e batchNormGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	return batchNormBackward[T](l, l.GPU(), top, bottom, nil)
}
