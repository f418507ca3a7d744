//go:build !amd64 || purego

package vec

// LRNScalePrefix does nothing: this build has no vector kernel for it,
// the caller does every value.
func LRNScalePrefix(x, sum, y []float32, alpha, k float32, beta float64) int { return 0 }
