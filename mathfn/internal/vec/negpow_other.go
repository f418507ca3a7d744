//go:build (!amd64 && !arm64) || purego

package vec

// NegPowPrefix does nothing: this build has no vector kernel for
// the powers, the caller does them all.
func NegPowPrefix[T float32 | float64](dst, src []T, beta float64) int { return 0 }
