package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// silenceGPU is Silence's GPU half.
type silenceGPU[T layer.Float] struct{ l *silenceLayer[T] }

func newSilenceGPU[T layer.Float](l *silenceLayer[T]) layer.Engine[T] { return silenceGPU[T]{l} }

// Forward has nothing to do.
func (silenceGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward zeroes the diffs of the bottoms that propagate, on the device.
func (e silenceGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return kit.ZeroPropagatedDiffs[T](l.GPU(), propagateDown, bottom)
}
