package layer

import "github.com/gocaffe/gocaffe/blob"

// videoDataGPU is VideoData's GPU half.
type videoDataGPU[T Float] struct{ l *VideoData[T] }

func newVideoDataGPU[T Float](l *VideoData[T]) Engine[T] { return videoDataGPU[T]{l} }

// Forward hands the tops the next batch, already pushed to the device by
// the prefetch goroutine.
func (e videoDataGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.forwardGPU(top) }

// Backward has nothing to do: data layers have no bottoms.
func (videoDataGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
