//go:build !amd64 || purego

package mathfn

// colMaxVector does nothing: this build has no vector kernels.
func colMaxVector[T Float](dst, x []T, rows, ld int) bool { return false }

// slideMaxVector does nothing: this build has no vector kernels.
func slideMaxVector[T Float](dst, src []T, k int) bool { return false }

// slideMaxS2Vector does nothing: this build has no vector kernels.
func slideMaxS2Vector[T Float](dst, src []T, k int) bool { return false }
