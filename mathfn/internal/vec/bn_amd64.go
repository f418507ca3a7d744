//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// bnAVX2 says whether BatchNorm's float32 passes run eight values at a
// time (bn_avx2_amd64.s).
var bnAVX2 = cpu.X86.HasAVX2

//go:noescape
func bnSquaresF32AVX2(x, sq unsafe.Pointer, n int, m float32)

//go:noescape
func bnNormalizeF32AVX2(x, y, xn unsafe.Pointer, n int, m, s float32)

//go:noescape
func bnDxF32AVX2(y, dy, dx unsafe.Pointer, n int, s1, s2, scale, std float32)

// f32Prefix returns how many of n float32 values the AVX2 kernels take
// (whole vectors of 8), 0 where they do not run (float64, no AVX2).
func f32Prefix[T float32 | float64](n int) int {
	var zero T
	if !bnAVX2 || unsafe.Sizeof(zero) != 4 {
		return 0
	}
	return n / 8 * 8
}

// BNSquaresPrefix sets sq = (x - m)^2 (the difference rounded, then
// its square) over as many whole vectors as x holds and returns how many
// values it did; the caller does the rest.
func BNSquaresPrefix[T float32 | float64](x, sq []T, m T) int {
	n := f32Prefix[T](len(x))
	if n > 0 {
		_ = sq[n-1]
		bnSquaresF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&sq[0]), n, float32(m))
	}
	return n
}

// BNNormalizePrefix sets y = xn = (x - m) / s (the difference rounded,
// then a true division) over as many whole vectors as x holds (y may be
// x) and returns how many values it did.
func BNNormalizePrefix[T float32 | float64](x, y, xn []T, m, s T) int {
	n := f32Prefix[T](len(x))
	if n > 0 {
		_, _ = y[n-1], xn[n-1]
		bnNormalizeF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&xn[0]), n, float32(m), float32(s))
	}
	return n
}

// BNDxPrefix sets dx = ((y*s1 + s2)*scale + dy) / std, each operation
// rounded on its own, over as many whole vectors as y holds (dx may be
// dy) and returns how many values it did.
func BNDxPrefix[T float32 | float64](y, dy, dx []T, s1, s2, scale, std T) int {
	n := f32Prefix[T](len(y))
	if n > 0 {
		_, _ = dy[n-1], dx[n-1]
		bnDxF32AVX2(unsafe.Pointer(&y[0]), unsafe.Pointer(&dy[0]), unsafe.Pointer(&dx[0]), n,
			float32(s1), float32(s2), float32(scale), float32(std))
	}
	return n
}
