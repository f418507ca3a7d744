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
func copyRowsAVX2(dst, src unsafe.Pointer, bytes, rows, dstStride, srcStride int)

// rowsAVX512 says whether the row kernels run in assembly; rowsAVX2
// whether Copy does, without AVX-512 (a call to memmove per row cost more
// than short rows' moves on the AVX2 machine too: GEMM's packed panels
// are rows of 64 bytes).
var (
	rowsAVX512 = cpu.X86.HasAVX512F
	rowsAVX2   = !rowsAVX512 && cpu.X86.HasAVX2
)

// Copy copies rows rows of n elements from src, whose rows are
// srcStride elements apart, to dst, whose rows are dstStride apart. The
// caller has checked the bounds (Fit).
func Copy[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	size := int(unsafe.Sizeof(dst[0]))
	if rowsAVX2 && n > 0 && rows > 0 {
		copyRowsAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n*size, rows, dstStride*size, srcStride*size)
		return
	}
	if !rowsAVX512 {
		copyGo(dst, src, n, rows, dstStride, srcStride)
		return
	}
	words := n * size / 4 // 32-bit lanes
	copyRowsAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), words/16, rows, dstStride*size, srcStride*size, uint16(1)<<(words%16)-1)
}

// Add is Copy adding src's rows to dst's.
func Add[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	if !rowsAVX512 {
		addGo(dst, src, n, rows, dstStride, srcStride)
		return
	}
	d, s := unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
	if unsafe.Sizeof(dst[0]) == 4 {
		addRowsAVX512F32(d, s, n/16, rows, dstStride*4, srcStride*4, uint16(1)<<(n%16)-1)
	} else {
		addRowsAVX512F64(d, s, n/8, rows, dstStride*8, srcStride*8, uint16(1)<<(n%8)-1)
	}
}
