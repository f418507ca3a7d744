//go:build (!amd64 && !arm64) || purego

package mathfn

// binaryPrefix does nothing: this build has no vector kernels.
func binaryPrefix[T Float](op binaryOp, n int, a, b, y []T) int { return 0 }

// scalarPrefix does nothing: this build has no vector kernels.
func scalarPrefix[T Float](op scalarOp, n int, a []T, alpha, beta T, y []T) int { return 0 }
