//go:build amd64 && !purego

package rows

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func copyRowsAVX512(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)

//go:noescape
func addRowsAVX512F32(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)

//go:noescape
func addRowsAVX512F64(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)

//go:noescape
func copyOffsetsAVX512(dst, src unsafe.Pointer, full, dstStride int, offs unsafe.Pointer, rows int, mask uint16)

//go:noescape
func copyOffsetsAVX2(dst, src unsafe.Pointer, n, dstStride int, offs unsafe.Pointer, rows int)

//go:noescape
func copyRowsAVX2(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

//go:noescape
func addRowsAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

//go:noescape
func addRowsAVX2F64(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

// rowsAVX512 and rowsAVX2 say which assembly the row kernels run in. AVX2
// matters on the CPUs without AVX-512 (AMD's before Zen 4): there the Go
// loops cost a call to memmove per row, and im2col's rows are short
// (CIFAR-10 quick's conv2: 16 elements), so that im2col took a fifth of a
// training pass.
var (
	rowsAVX512 = cpu.X86.HasAVX512F
	rowsAVX2   = cpu.X86.HasAVX2
)

// Copy copies rows rows of n elements from src, whose rows are
// srcStride elements apart, to dst, whose rows are dstStride apart. The
// caller has checked the bounds (Fit).
func Copy[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	size := int(unsafe.Sizeof(dst[0]))
	switch {
	case rowsAVX512:
		words := n * size / 4 // 32-bit lanes
		copyRowsAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), words/16, rows, dstStride*size, srcStride*size, uint16(1)<<(words%16)-1)
	case !rowsAVX2:
		copyGo(dst, src, n, rows, dstStride, srcStride)
	case n > 0 && rows > 0: // the AVX2 kernel reads the first row's ends
		copyAVX2(dst, src, n, rows, dstStride, srcStride)
	}
}

// Add is Copy adding src's rows to dst's.
func Add[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	switch {
	case rowsAVX512:
		d, s := unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
		if unsafe.Sizeof(dst[0]) == 4 {
			addRowsAVX512F32(d, s, n/16, rows, dstStride*4, srcStride*4, uint16(1)<<(n%16)-1)
		} else {
			addRowsAVX512F64(d, s, n/8, rows, dstStride*8, srcStride*8, uint16(1)<<(n%8)-1)
		}
	case !rowsAVX2:
		addGo(dst, src, n, rows, dstStride, srcStride)
	case n > 0 && rows > 0:
		addAVX2(dst, src, n, rows, dstStride, srcStride)
	}
}

// addAVX2 is Add on the AVX2 kernels, for n and rows above 0.
func addAVX2[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	d, s := unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
	if unsafe.Sizeof(dst[0]) == 4 {
		addRowsAVX2F32(d, s, n, rows, dstStride*4, srcStride*4)
	} else {
		addRowsAVX2F64(d, s, n, rows, dstStride*8, srcStride*8)
	}
}

// copyAVX2 is Copy on the AVX2 kernel, for n and rows above 0.
func copyAVX2[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	size := int(unsafe.Sizeof(dst[0]))
	copyRowsAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n*size/4, rows, dstStride*size, srcStride*size)
}

//go:noescape
func copy2RowsAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

// copy2Vector is Copy2 on the AVX2 kernel, reporting whether it ran (for
// float32 on a CPU with AVX2), for n and rows above 0.
func copy2Vector[T Float](dst, src []T, n, rows, dstStride, srcStride int) bool {
	if !rowsAVX2 || unsafe.Sizeof(dst[0]) != 4 {
		return false
	}
	copy2RowsAVX2F32(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n, rows, dstStride*4, srcStride*4)
	return true
}

//go:noescape
func copyStridedAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride, step int)

// copyStridedVector is CopyStrided on the AVX2 gather kernel, reporting
// whether it ran (for float32 on a CPU with AVX2, steps whose indices fit
// the gather's 32 bits), for n and rows above 0.
func copyStridedVector[T Float](dst, src []T, n, rows, dstStride, srcStride, step int) bool {
	if !rowsAVX2 || unsafe.Sizeof(dst[0]) != 4 || step <= 0 || step > 1<<24 {
		return false
	}
	copyStridedAVX2F32(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n, rows, dstStride*4, srcStride*4, step)
	return true
}

// copyOffsetsVector is CopyOffsets on the AVX-512 or AVX2 kernel,
// reporting whether it ran (float32, on AVX2 rows of at least 4), for n
// and offs' length above 0.
func copyOffsetsVector[T Float](dst, src []T, n, dstStride int, offs []int32) bool {
	if unsafe.Sizeof(dst[0]) != 4 {
		return false
	}
	if !rowsAVX512 {
		if !rowsAVX2 || n < 4 {
			return false
		}
		copyOffsetsAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n, dstStride*4, unsafe.Pointer(&offs[0]), len(offs))
		return true
	}
	copyOffsetsAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n/16, dstStride*4, unsafe.Pointer(&offs[0]), len(offs),
		uint16(1)<<(n%16)-1)
	return true
}
