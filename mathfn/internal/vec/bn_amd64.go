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

//go:noescape
func bnSumF32AVX2(x unsafe.Pointer, n int) float32

//go:noescape
func bnSqDevSumF32AVX2(x unsafe.Pointer, n int, m float32) float32

//go:noescape
func bnNormScaleF32AVX2(x, y, xn unsafe.Pointer, n int, m, s, gamma, beta float32, relu int)

//go:noescape
func bnBackRowF32AVX2(dy, xn unsafe.Pointer, n int, gamma, beta float32, relu int, sums unsafe.Pointer)

// BNSumPrefix returns the sum of as many whole vectors as x holds, and how
// many values that is; the caller adds the rest.
func BNSumPrefix[T float32 | float64](x []T) (T, int) {
	n := f32Prefix[T](len(x))
	if n == 0 {
		return 0, 0
	}
	return T(bnSumF32AVX2(unsafe.Pointer(&x[0]), n)), n
}

// BNSqDevSumPrefix returns the sum of (x - m)^2 (the difference rounded,
// then its square) over as many whole vectors as x holds, and how many
// values that is.
func BNSqDevSumPrefix[T float32 | float64](x []T, m T) (T, int) {
	n := f32Prefix[T](len(x))
	if n == 0 {
		return 0, 0
	}
	return T(bnSqDevSumF32AVX2(unsafe.Pointer(&x[0]), n, float32(m))), n
}

// BNNormScalePrefix sets xn = (x - m) / s (a true division) and y =
// xn*gamma + beta (each operation rounded), with relu Caffe's zero-slope
// ReLU of that, over as many whole vectors as x holds (y may be x), and
// returns how many values it did.
func BNNormScalePrefix[T float32 | float64](x, y, xn []T, m, s, gamma, beta T, relu bool) int {
	n := f32Prefix[T](len(x))
	if n > 0 {
		_, _ = y[n-1], xn[n-1]
		bnNormScaleF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&xn[0]), n,
			float32(m), float32(s), float32(gamma), float32(beta), btoi(relu))
	}
	return n
}

// BNBackRowPrefix sets, over as many whole vectors as dy holds, dz = dy
// times the zero-slope ReLU's factor of y = xn*gamma + beta (1 where y >
// 0, else 0; each operation rounded, as BNNormScalePrefix computes y; with
// relu only, else dz = dy) and dy = dz*gamma, and returns the sums of dz,
// dz*xn, xn*dy and dy (the new dy) over them, and how many values it did.
func BNBackRowPrefix[T float32 | float64](dy, xn []T, gamma, beta T, relu bool) ([4]T, int) {
	var sums [4]float32
	n := f32Prefix[T](len(dy))
	if n == 0 {
		return [4]T{}, 0
	}
	_ = xn[n-1]
	bnBackRowF32AVX2(unsafe.Pointer(&dy[0]), unsafe.Pointer(&xn[0]), n, float32(gamma), float32(beta), btoi(relu), unsafe.Pointer(&sums))
	return [4]T{T(sums[0]), T(sums[1]), T(sums[2]), T(sums[3])}, n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
