package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

// ForwardGPU has nothing to do: the tops share the bottom's data.
func (*Split[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardGPU sums the tops' diffs into the bottom's on the device.
func (l *Split[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return splitBackward[T](l.gpu(), top, propagateDown, bottom)
}
