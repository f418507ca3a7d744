//go:build arm64 && !purego

package rows

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func copyRowsNEON(dst, src unsafe.Pointer, bytes, rows, dstStride, srcStride int)

//go:noescape
func addRowsF32NEON(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

//go:noescape
func addRowsF64NEON(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)

// rowsNEON says whether the row kernels run in assembly (every arm64 CPU
// has NEON; chosen at run time as on amd64).
var rowsNEON = cpu.ARM64.HasASIMD

// Copy copies rows rows of n elements from src, whose rows are
// srcStride elements apart, to dst, whose rows are dstStride apart. The
// caller has checked the bounds (Fit).
func Copy[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	if !rowsNEON || n == 0 || rows == 0 {
		copyGo(dst, src, n, rows, dstStride, srcStride)
		return
	}
	size := int(unsafe.Sizeof(dst[0]))
	copyRowsNEON(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n*size, rows, dstStride*size, srcStride*size)
}

// Add is Copy adding src's rows to dst's.
func Add[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	if !rowsNEON || n == 0 || rows == 0 {
		addGo(dst, src, n, rows, dstStride, srcStride)
		return
	}
	d, s := unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
	if unsafe.Sizeof(dst[0]) == 4 {
		addRowsF32NEON(d, s, n, rows, dstStride*4, srcStride*4)
	} else {
		addRowsF64NEON(d, s, n, rows, dstStride*8, srcStride*8)
	}
}

// copy2Vector reports false: Copy2 has no NEON kernel.
func copy2Vector[T Float](dst, src []T, n, rows, dstStride, srcStride int) bool { return false }

// copyStridedVector reports false: CopyStrided has no NEON kernel.
func copyStridedVector[T Float](dst, src []T, n, rows, dstStride, srcStride, step int) bool {
	return false
}

// copyOffsetsVector reports false: this build has no such kernel.
func copyOffsetsVector[T Float](dst, src []T, n, dstStride int, offs []int32) bool { return false }
