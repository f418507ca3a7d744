//go:build arm64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// neon says whether the NEON kernels of vec_arm64.s run (every arm64 CPU
// has them; chosen at run time as on amd64).
var neon = cpu.ARM64.HasASIMD

//go:noescape
func reluF32NEON(x, y unsafe.Pointer, n int)

//go:noescape
func reluF64NEON(x, y unsafe.Pointer, n int)

// ReLUPrefix computes the zero-slope ReLU of as many whole vectors
// as x holds (x and y of one length, the same or apart) and returns how
// many values it did; the caller does the rest.
func ReLUPrefix[T float32 | float64](x, y []T) int {
	if !neon {
		return 0
	}
	lanes := 16 / int(unsafe.Sizeof(x[0]))
	n := len(x) / lanes * lanes
	if n == 0 {
		return 0
	}
	if unsafe.Sizeof(x[0]) == 4 {
		reluF32NEON(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	} else {
		reluF64NEON(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	}
	return n
}

// ReLUBackPrefix does nothing on arm64: the backward pass has no NEON
// kernel; the caller does it all.
func ReLUBackPrefix[T float32 | float64](x, dy, dx []T, pos, neg, nan T) int { return 0 }
