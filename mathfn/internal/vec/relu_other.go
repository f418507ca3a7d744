//go:build (!amd64 && !arm64) || purego

package vec

// ReLUPrefix does nothing: this build has no vector kernel for the
// ReLU, the caller does it all.
func ReLUPrefix[T float32 | float64](x, y []T) int { return 0 }

// ReLUBackPrefix does nothing either.
func ReLUBackPrefix[T float32 | float64](x, dy, dx []T, pos, neg, nan T) int { return 0 }
