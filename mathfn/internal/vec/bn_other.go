//go:build !amd64 || purego

package vec

// BNSquaresPrefix does nothing: this build has no vector kernel for
// BatchNorm's passes, the caller does them all.
func BNSquaresPrefix[T float32 | float64](x, sq []T, m T) int { return 0 }

// BNNormalizePrefix does nothing either.
func BNNormalizePrefix[T float32 | float64](x, y, xn []T, m, s T) int { return 0 }

// BNDxPrefix does nothing either.
func BNDxPrefix[T float32 | float64](y, dy, dx []T, s1, s2, scale, std T) int { return 0 }

// BNSumPrefix does nothing either.
func BNSumPrefix[T float32 | float64](x []T) (T, int) { return 0, 0 }

// BNSqDevSumPrefix does nothing either.
func BNSqDevSumPrefix[T float32 | float64](x []T, m T) (T, int) { return 0, 0 }

// BNNormScalePrefix does nothing either.
func BNNormScalePrefix[T float32 | float64](x, y, xn []T, m, s, gamma, beta T, relu bool) int {
	return 0
}

// BNBackRowPrefix does nothing either.
func BNBackRowPrefix[T float32 | float64](dy, xn []T, gamma, beta T, relu bool) ([4]T, int) {
	return [4]T{}, 0
}
