//go:build amd64 && !purego

package layer

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// rowVector says whether the row kernels run sixteen float32 values at a
// time.
var rowVector = cpu.X86.HasAVX512F

//go:noescape
func mulRowF32AVX512(x, y unsafe.Pointer, n int, f float32)

//go:noescape
func mulAddRowF32AVX512(x, y unsafe.Pointer, n int, f, b float32)

//go:noescape
func axpyRowF32AVX512(x, y unsafe.Pointer, n int, f float32)

// rowVectorPrefix returns how many of n float32 values the kernels take
// (whole vectors), 0 for float64 or without AVX-512.
func rowVectorPrefix[T Float](x []T) int {
	if !rowVector || unsafe.Sizeof(x[0]) != 4 {
		return 0
	}
	return len(x) / 16 * 16
}

// The kernels on the first k values of x and y (k from rowVectorPrefix).

func mulRowVector[T Float](x, y []T, k int, f T) {
	mulRowF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), k, *(*float32)(unsafe.Pointer(&f)))
}

func mulAddRowVector[T Float](x, y []T, k int, f, b T) {
	mulAddRowF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), k, *(*float32)(unsafe.Pointer(&f)), *(*float32)(unsafe.Pointer(&b)))
}

func axpyRowVector[T Float](x, y []T, k int, f T) {
	axpyRowF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), k, *(*float32)(unsafe.Pointer(&f)))
}
