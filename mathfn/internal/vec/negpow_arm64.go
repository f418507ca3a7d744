//go:build arm64 && !purego

package vec

import "unsafe"

// The kernel's forms of s^-beta, as negPow computes them.
const (
	negPow075 = iota // 1 / (sqrt(s) * sqrt(sqrt(s)))
	negPow05         // 1 / sqrt(s)
	negPow1          // 1 / s
)

//go:noescape
func negPowF32NEON(src, dst unsafe.Pointer, n, form int)

// NegPowPrefix sets dst[i] = s^-beta for as many whole vectors of
// src as it can and returns how many values it did: float32 and the betas
// negPow takes apart, in float64 as negPow does, so the results are the
// same bit for bit; the caller does the rest.
func NegPowPrefix[T float32 | float64](dst, src []T, beta float64) int {
	if !neon || unsafe.Sizeof(src[0]) != 4 {
		return 0
	}
	var form int
	switch beta {
	case 0.75:
		form = negPow075
	case 0.5:
		form = negPow05
	case 1:
		form = negPow1
	default:
		return 0
	}
	n := len(src) / 4 * 4
	if n > 0 {
		negPowF32NEON(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), n, form)
	}
	return n
}
