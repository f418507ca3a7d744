package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU copies the next batch, already pushed to the device by the
// prefetch goroutine, into the tops on the device.
func (l *Data[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error { return l.forwardGPU(top) }

// BackwardGPU has nothing to do: data layers have no bottoms.
func (*Data[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
