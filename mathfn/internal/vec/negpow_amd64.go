//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// lrnVector says whether float32 powers s^-beta for the usual betas run
// eight at a time (AVX-512) or four (lrnAVX2).
var (
	lrnVector = cpu.X86.HasAVX512F || lrnAVX2
	lrnAVX2   = !cpu.X86.HasAVX512F && cpu.X86.HasAVX2
)

// The kernels' forms of s^-beta, as negPow computes them.
const (
	negPow075 = iota // 1 / (sqrt(s) * sqrt(sqrt(s)))
	negPow05         // 1 / sqrt(s)
	negPow1          // 1 / s
)

//go:noescape
func negPowF32AVX512(src, dst unsafe.Pointer, n, form int)

//go:noescape
func negPowF32AVX2(src, dst unsafe.Pointer, n, form int)

// NegPowPrefix sets dst[i] = s^-beta for as many whole vectors of
// src as it can and returns how many values it did: float32 and the betas
// negPow takes apart, in float64 as negPow does, so the results are the
// same bit for bit; the caller does the rest.
func NegPowPrefix[T float32 | float64](dst, src []T, beta float64) int {
	if !lrnVector || unsafe.Sizeof(src[0]) != 4 {
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
	n := len(src) / 8 * 8
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	if lrnAVX2 {
		negPowF32AVX2(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), n, form)
	} else {
		negPowF32AVX512(unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0]), n, form)
	}
	return n
}
