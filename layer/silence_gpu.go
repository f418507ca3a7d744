package layer

import (
	"github.com/gocaffe/gocaffe/blob"
)

// ForwardGPU has nothing to do.
func (*Silence[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardGPU zeroes the diffs of the bottoms that propagate, on the device.
func (l *Silence[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return zeroPropagatedDiffs[T](l.gpu(), propagateDown, bottom)
}
