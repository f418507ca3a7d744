package normalization

import (
	"math"
	"math/rand/v2"
	"testing"
)

// negPows gives negPow's float32 results bit for bit, eight at a time
// (AVX-512) and one at a time alike, for the betas taken apart and
// another: scales from LRN's usual range and beyond (1, the smallest and
// largest floats, a denormal), in arrays that end in a partial vector.
func TestNegPowsMatchesNegPow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := []float32{1, 2, 0.5, math.SmallestNonzeroFloat32, math.MaxFloat32, 1e-30, 1e30, 1.0000001}
	for len(src) < 203 {
		src = append(src, 1+rng.Float32()*float32(rng.IntN(100)), float32(math.Exp(rng.NormFloat64()*20)))
	}
	for _, beta := range []float64{0.75, 0.5, 1, 0.8} {
		dst := make([]float32, len(src))
		negPows(dst, src, beta)
		for i, s := range src {
			if want := float32(negPow(float64(s), beta)); math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("beta %v: %v^-beta = %v, negPow %v", beta, s, dst[i], want)
			}
		}
	}
}
