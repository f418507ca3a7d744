package kit

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
)

// ElementParallelMin is the fewest elements an element-wise pass spreads
// over the cores: below it (about 64 KB of float32, which one core runs
// in some microseconds) handing parts to other goroutines costs more than
// it saves.
const ElementParallelMin = 1 << 14

// ElementParallel runs body over [0, n) in contiguous parts on all cores
// when n is large enough (mathfn.Parallel), else on the calling goroutine.
// Element-wise passes are memory-bound loops that a second core speeds up
// (CaffeNet's relu1 over 2.9 million values: 2.3 ms on one core, 1.4 on
// two), or bound by a function per value (tanh) that each core computes
// on its own part.
func ElementParallel(n int, body func(part, lo, hi int)) { UnitsParallel(n, 1, body) }

// UnitsParallel is elementParallel over units of size elements each (the
// rows or blocks of a pass), spread when they hold enough elements.
func UnitsParallel(units, size int, body func(part, lo, hi int)) {
	if units*size < ElementParallelMin {
		body(0, 0, units)
		return
	}
	mathfn.Parallel(units, body)
}

// VectorAligned reports whether the arrays may be read as 16-byte vectors.
func VectorAligned(ps ...cuda.DevicePtr) bool {
	for _, p := range ps {
		if p%16 != 0 {
			return false
		}
	}
	return true
}

// VectorThreads is how many threads a vector kernel over n elements of T
// wants (mathfn.VectorThreads).
func VectorThreads[T Float](n int) int { return mathfn.VectorThreads[T](n) }
