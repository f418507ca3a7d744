//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// reluVector says whether the zero-slope ReLU runs sixteen float32 (eight
// float64) values at a time.
var reluVector = cpu.X86.HasAVX512F

//go:noescape
func reluF32AVX512(x, y unsafe.Pointer, n int)

//go:noescape
func reluF64AVX512(x, y unsafe.Pointer, n int)

// ReLUPrefix computes the zero-slope ReLU of as many whole vectors
// as x holds (x and y of one length, the same or apart) and returns how
// many values it did; the caller does the rest.
func ReLUPrefix[T float32 | float64](x, y []T) int {
	if !reluVector {
		return 0
	}
	lanes := 64 / int(unsafe.Sizeof(x[0]))
	n := len(x) / lanes * lanes
	if n == 0 {
		return 0
	}
	if unsafe.Sizeof(x[0]) == 4 {
		reluF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	} else {
		reluF64AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	}
	return n
}
