package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// splitGPU is Split's GPU half.
type splitGPU[T layer.Float] struct{ l *splitLayer[T] }

func newSplitGPU[T layer.Float](l *splitLayer[T]) layer.Engine[T] { return splitGPU[T]{l} }

// Forward has nothing to do: the tops share the bottom's data.
func (splitGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward sums the tops' diffs into the bottom's on the device.
func (e splitGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return splitBackward[T](l.GPU(), top, propagateDown, bottom)
}
