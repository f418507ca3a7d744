package vec

import (
	"math"
	"testing"
)

// reluZero32 is Caffe's zero-slope ReLU of one value, max(v, 0) + 0 *
// min(v, 0) with std::max's and std::min's choices.
func reluZero32(v float32) float32 {
	hi, lo := v, float32(0)
	if v < 0 {
		hi = 0
	}
	if !(0 < v) {
		lo = v
	}
	return hi + 0*lo
}

// closeSum reports whether a sum taken in another order is within
// rounding of a float64 reference (relative to the sum of magnitudes).
func closeSum(got float32, want, mag float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(float64(got)) || float64(got) == want
	}
	return math.Abs(float64(got)-want) <= 1e-5*mag+1e-30
}

// TestBNFusedRowPrefixes holds the fused chain's row kernels to the Go
// loops of the unfused layers: the element-wise values bit for bit, the
// sums within rounding of float64 sums, over lengths with and without a
// tail (the kernels take whole vectors; the rest is the caller's).
func TestBNFusedRowPrefixes(t *testing.T) {
	for _, n := range []int{0, 7, 8, 9, 40, 49, 64, 197, 3136} {
		x := make([]float32, n)
		for i, v := range bnValues(n, uint64(n)+7) {
			if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) || math.Abs(float64(v)) > 1e30 {
				v = 0.5 // finite sums: the odd values are for the element-wise checks
			}
			x[i] = v
		}
		m := float32(0.125)
		sum, done := BNSumPrefix(x)
		sq, done2 := BNSqDevSumPrefix(x, m)
		if done != done2 || done > n {
			t.Fatalf("n %d: prefixes %d and %d", n, done, done2)
		}
		var want, wantSq, mag, magSq float64
		for _, v := range x[:done] {
			d := v - m
			want += float64(v)
			mag += math.Abs(float64(v))
			wantSq += float64(d * d)
			magSq += float64(d * d)
		}
		if !closeSum(sum, want, mag) || !closeSum(sq, wantSq, magSq) {
			t.Errorf("n %d: sum %v want %v, squares %v want %v", n, sum, want, sq, wantSq)
		}

		odd := bnValues(n, uint64(n)+11)
		for _, relu := range []bool{false, true} {
			s, gamma, beta := float32(0.7), float32(-1.3), float32(0.01)
			y, xn := make([]float32, n), make([]float32, n)
			done := BNNormScalePrefix(odd, y, xn, m, s, gamma, beta, relu)
			for i := range done {
				q := (odd[i] - m) / s
				v := float32(q*gamma) + beta
				if relu {
					v = reluZero32(v)
				}
				if !same(xn[i], q) || !same(y[i], v) {
					t.Fatalf("n %d relu %v: at %d of %v: y %v xn %v, want %v %v", n, relu, i, odd[i], y[i], xn[i], v, q)
				}
			}

			dy0 := bnValues(n, uint64(n)+17)
			for i, v := range dy0 { // finite gradients for the sums
				if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) || math.Abs(float64(v)) > 1e30 {
					dy0[i] = -0.25
				}
			}
			dy := append([]float32(nil), dy0...)
			xnb := x
			sums, done := BNBackRowPrefix(dy, xnb, gamma, beta, relu)
			var ref [4]float64
			var refMag [4]float64
			for i := range done {
				dz := dy0[i]
				if relu {
					f := float32(0)
					if float32(xnb[i]*gamma)+beta > 0 {
						f = 1
					}
					dz *= f
				}
				nd := dz * gamma
				if !same(dy[i], nd) {
					t.Fatalf("n %d relu %v: dy at %d: %v want %v", n, relu, i, dy[i], nd)
				}
				for k, v := range []float32{dz, dz * xnb[i], xnb[i] * nd, nd} {
					ref[k] += float64(v)
					refMag[k] += math.Abs(float64(v))
				}
			}
			for k := range sums {
				if !closeSum(float32(sums[k]), ref[k], refMag[k]) {
					t.Errorf("n %d relu %v: sum %d %v want %v", n, relu, k, sums[k], ref[k])
				}
			}
		}
	}
}
