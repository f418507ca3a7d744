//go:build (!amd64 && !arm64) || purego

package vec

// ReLUPrefix does nothing: this build has no vector kernel for the
// ReLU, the caller does it all.
func ReLUPrefix[T float32 | float64](x, y []T) int { return 0 }
