//go:build !amd64 || purego

package layer

// negPowVectorPrefix does nothing: this build has no vector kernel for
// the powers, the caller does them all.
func negPowVectorPrefix[T Float](dst, src []T, beta float64) int { return 0 }
