package mathfn

import (
	"math"

	"github.com/gocaffe/gocaffe/mathfn/internal/vec"
)

// The layers' vector kernels (mathfn/internal/vec: AVX-512 assembly where
// the CPU has it, NEON on arm64 but for max pooling), for the layer packages, which cannot import an internal
// package of mathfn. Each does what the CPU can in whole vectors and
// leaves the rest to the caller's loop.

// ReLUPrefix computes the zero-slope ReLU of as many whole vectors as x
// holds (x and y of one length, the same or apart), as Caffe computes it,
// and returns how many values it did.
func ReLUPrefix[T Float](x, y []T) int { return vec.ReLUPrefix(x, y) }

// NegPowPrefix sets dst[i] = src[i]^-beta for as many whole vectors of src
// as it can (float32, beta 0.75, 0.5 or 1: LRN's scale) and returns how
// many values it did.
func NegPowPrefix[T Float](dst, src []T, beta float64) int { return vec.NegPowPrefix(dst, src, beta) }

// HasMaxPoolRun says whether MaxPoolRun pools sixteen windows at a time on
// this CPU and build.
func HasMaxPoolRun() bool { return vec.HasMaxPoolRun }

// MaxPoolRun pools up to sixteen float32 windows at once (see
// HasMaxPoolRun): the lanes set in mask, windows wholly inside plane whose
// outputs are y[j] and idx[j], starting at starts[j], their elements at
// offsets from their start. It returns the lanes it left to the caller's
// loop (Caffe's rules on NaN and ties there).
func MaxPoolRun(plane, offsets []int32, starts *[16]int32, mask uint16, y, idx []float32) uint16 {
	return vec.MaxPoolRun(plane, offsets, starts, mask, y, idx)
}

// MaxPoolRow is MaxPoolRun of windows one position apart (a stride of 1
// along a row), the first at start: starts[j] = start + j. Their elements
// are read with vector loads, not gathered: the same results, bit for bit.
func MaxPoolRow(plane, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	return vec.MaxPoolRow(plane, offsets, start, mask, y, idx)
}

// MaxPoolRow2 is MaxPoolRun of windows two positions apart (a stride of 2
// along a row), the first at start: starts[j] = start + 2j. Their elements
// are read with vector loads, not gathered: the same results, bit for bit.
func MaxPoolRow2(plane, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	return vec.MaxPoolRow2(plane, offsets, start, mask, y, idx)
}

// ReLUBackPrefix computes ReLU's dx = dy * f over as many whole vectors
// as x holds (f: pos where x > 0, neg where x <= 0, nan where x is a
// NaN) and returns how many values it did; the caller does the rest.
func ReLUBackPrefix[T Float](x, dy, dx []T, pos, neg, nan T) int {
	return vec.ReLUBackPrefix(x, dy, dx, pos, neg, nan)
}

// BNSquaresPrefix sets sq = (x - m)^2 (the difference rounded, then its
// square) over as many whole vectors as x holds and returns how many
// values it did: BatchNorm's variance pass.
func BNSquaresPrefix[T Float](x, sq []T, m T) int { return vec.BNSquaresPrefix(x, sq, m) }

// BNNormalizePrefix sets y = xn = (x - m) / s (the difference rounded,
// then a true division) over as many whole vectors as x holds (y may be
// x) and returns how many values it did: BatchNorm's normalising pass.
func BNNormalizePrefix[T Float](x, y, xn []T, m, s T) int {
	return vec.BNNormalizePrefix(x, y, xn, m, s)
}

// BNDxPrefix sets dx = ((y*s1 + s2)*scale + dy) / std, each operation
// rounded on its own (no fused multiply-add), over as many whole vectors
// as y holds (dx may be dy) and returns how many values it did:
// BatchNorm's bottom gradient.
func BNDxPrefix[T Float](y, dy, dx []T, s1, s2, scale, std T) int {
	return vec.BNDxPrefix(y, dy, dx, s1, s2, scale, std)
}

// BNSumPrefix returns the sum of as many whole vectors as x holds, and how
// many values that is (0 where there is no kernel): the fused BatchNorm
// chain's row sums (layer/normalization).
func BNSumPrefix[T Float](x []T) (T, int) { return vec.BNSumPrefix(x) }

// BNSqDevSumPrefix returns the sum of (x - m)^2 (the difference rounded,
// then its square) over as many whole vectors as x holds, and how many
// values that is: the fused chain's variance sums.
func BNSqDevSumPrefix[T Float](x []T, m T) (T, int) { return vec.BNSqDevSumPrefix(x, m) }

// BNNormScalePrefix sets xn = (x - m) / s and y = xn*gamma + beta (each
// operation rounded; with relu Caffe's zero-slope ReLU of that) over as
// many whole vectors as x holds (y may be x), and returns how many values
// it did: the fused chain's forward pass of a row.
func BNNormScalePrefix[T Float](x, y, xn []T, m, s, gamma, beta T, relu bool) int {
	return vec.BNNormScalePrefix(x, y, xn, m, s, gamma, beta, relu)
}

// BNBackRowPrefix sets dz = dy times the zero-slope ReLU's factor of y =
// xn*gamma + beta (with relu; dy without) and dy = dz*gamma over as many
// whole vectors as dy holds, and returns the sums of dz, dz*xn, xn*dy and
// dy (the new one) over them and how many values it did: the fused
// chain's backward pass of a row. y is computed again from xn, rounded as
// BNNormScalePrefix rounds it, rather than read: the ReLU's mask then
// costs no sweep over the top's memory.
func BNBackRowPrefix[T Float](dy, xn []T, gamma, beta T, relu bool) ([4]T, int) {
	return vec.BNBackRowPrefix(dy, xn, gamma, beta, relu)
}

// LRNScale sets y[i] = x[i] / (k + alpha*sum[i])^beta in float32 for beta
// 0.75, 0.5 or 1 (LRN's output from its window's sum of squares, in an
// inference pass) and reports true; for another beta it does nothing and
// reports false. The product alpha*sum is rounded, then the sum; the
// power is taken apart into correctly rounded square roots and products
// (beta 0.75: r*sqrt(r), r = sqrt(s)), and x divided by it, in float32:
// vector kernels where the CPU has them, the same values bit for bit.
func LRNScale(x, sum, y []float32, alpha, k float32, beta float64) bool {
	if beta != 0.75 && beta != 0.5 && beta != 1 {
		return false
	}
	x, sum = x[:len(y)], sum[:len(y)]
	for i := vec.LRNScalePrefix(x, sum, y, alpha, k, beta); i < len(y); i++ {
		s := float32(alpha*sum[i]) + k // rounded before the sum, as the kernels
		var d float32
		switch beta {
		case 0.75:
			r := sqrt32(s)
			d = r * sqrt32(r)
		case 0.5:
			d = sqrt32(s)
		default:
			d = s
		}
		y[i] = x[i] / d
	}
	return true
}

// sqrt32 is the float32 square root, correctly rounded (the float64 root
// of a float32, rounded to float32, is).
func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) }

// Pool3x3S2 is the geometry of a 3x3 pooling of stride 2 without
// padding, which MaxPool3x3S2, AvePool3x3S2 and AvePool3x3S2Back pool
// sixteen windows of a row at a time (AVX-512).
type Pool3x3S2 = vec.Pool3x3S2

// MaxPool3x3S2 pools n float32 planes with Caffe's MAX, values into y and
// positions into idx, bit for bit as Caffe's loop (NaNs, ties, -FLT_MAX
// and -1 for windows with no value above it), and reports whether it ran
// (false: no kernel here, nothing done).
func MaxPool3x3S2(g Pool3x3S2, n int, x, y, idx []float32) bool {
	return vec.MaxPool3x3S2(g, n, x, y, idx)
}

// AvePool3x3S2 pools n float32 planes with Caffe's AVE, bit for bit, and
// reports whether it ran.
func AvePool3x3S2(g Pool3x3S2, n int, x, y []float32) bool { return vec.AvePool3x3S2(g, n, x, y) }

// MaxPool3x3S2Back sets dx to MAX's gradient of n float32 planes from
// MaxPool3x3S2's argmaxes idx, bit for bit as Caffe accumulates it, and
// reports whether it ran.
func MaxPool3x3S2Back(g Pool3x3S2, n int, dy, idx, dx []float32) bool {
	return vec.MaxPool3x3S2Back(g, n, dy, idx, dx)
}

// AvePool3x3S2Back sets dx to AVE's gradient of n float32 planes, bit for
// bit as Caffe accumulates it, and reports whether it ran.
func AvePool3x3S2Back(g Pool3x3S2, n int, dy, dx []float32) bool {
	return vec.AvePool3x3S2Back(g, n, dy, dx)
}
