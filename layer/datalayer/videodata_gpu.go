package datalayer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// videoDataGPU is VideoData's GPU half.
type videoDataGPU[T layer.Float] struct{ l *videoDataLayer[T] }

func newVideoDataGPU[T layer.Float](l *videoDataLayer[T]) layer.Engine[T] { return videoDataGPU[T]{l} }

// Forward hands the tops the next batch, already pushed to the device by
// the prefetch goroutine.
func (e videoDataGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.forwardGPU(top) }

// Backward has nothing to do: data layers have no bottoms.
func (videoDataGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
