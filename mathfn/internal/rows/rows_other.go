//go:build (!amd64 && !arm64) || purego

package rows

// Copy copies rows rows of n elements from src, whose rows are
// srcStride elements apart, to dst, whose rows are dstStride apart.
func Copy[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	copyGo(dst, src, n, rows, dstStride, srcStride)
}

// Add is Copy adding src's rows to dst's.
func Add[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	addGo(dst, src, n, rows, dstStride, srcStride)
}

// copy2Vector reports false: this build has no vector kernels.
func copy2Vector[T Float](dst, src []T, n, rows, dstStride, srcStride int) bool { return false }

// copyStridedVector reports false: this build has no vector kernels.
func copyStridedVector[T Float](dst, src []T, n, rows, dstStride, srcStride, step int) bool {
	return false
}

// copyOffsetsVector reports false: this build has no such kernel.
func copyOffsetsVector[T Float](dst, src []T, n, dstStride int, offs []int32) bool { return false }
