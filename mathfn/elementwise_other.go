//go:build !amd64 || purego

package mathfn

// binaryPrefix does nothing: this build has no vector kernels.
func binaryPrefix[T Float](op binaryOp, n int, a, b, y []T) int { return 0 }
