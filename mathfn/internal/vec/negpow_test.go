package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// NegPowPrefix's vector powers are those of the float64 formulas LRN's Go
// loop uses (layer/normalization's negPow), rounded to float32, bit for
// bit, for each beta it takes apart; it leaves the values past its whole
// vectors to the caller.
func TestNegPowPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := make([]float32, 1003)
	for i := range src {
		src[i] = float32(math.Exp(rng.NormFloat64() * 3))
	}
	src[5], src[6] = float32(math.Inf(1)), 1
	for _, beta := range []float64{0.75, 0.5, 1} {
		dst := make([]float32, len(src))
		n := NegPowPrefix(dst, src, beta)
		if n != 0 && n != len(src)/8*8 {
			t.Fatalf("beta %v: %d values done, want 0 or %d", beta, n, len(src)/8*8)
		}
		for i, s := range src[:n] {
			var want float64
			switch beta {
			case 0.75:
				r := math.Sqrt(float64(s))
				want = 1 / (r * math.Sqrt(r))
			case 0.5:
				want = 1 / math.Sqrt(float64(s))
			case 1:
				want = 1 / float64(s)
			}
			if dst[i] != float32(want) {
				t.Fatalf("beta %v: %v^-beta = %v, want %v", beta, s, dst[i], float32(want))
			}
		}
		t.Logf("beta %v: %d of %d values in vectors", beta, n, len(src))
	}
	if n := NegPowPrefix(make([]float32, 8), make([]float32, 8), 0.6); n != 0 {
		t.Errorf("beta 0.6: %d values done, want 0 (no vector form)", n)
	}
}
