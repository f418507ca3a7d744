package kit

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
)

// Btoi is 1 for true and 0 for false (without a branch: the compiler makes
// it a SETcc).
func Btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Grow returns s with length n, reusing its array when it is big enough
// (the contents are not cleared).
func Grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// FltMin is C's FLT_MIN, Caffe's floor on probabilities (for float and
// double alike).
const FltMin = 1.17549435082228750797e-38

// ZeroPropagatedDiffs zeroes the diffs of the bottoms that propagate
// (Silence's backward pass; Crop's shape bottom and window background).
func ZeroPropagatedDiffs[T Float, A any](d device.View[T, A], propagateDown []bool, bottom []*blob.Blob[T]) error {
	for i, b := range bottom {
		if propagateDown[i] {
			d.Set(b.Count(), 0, d.MutableDiff(b))
		}
	}
	return d.Err()
}

// ScalarShape is the shape of a scalar top, a loss: no axes.
func ScalarShape() []int { return []int{} }
