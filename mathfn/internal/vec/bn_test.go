package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bnValues returns n float32 values with the awkward ones among them:
// zeros of both signs, subnormals, infinities, a NaN, huge and tiny.
func bnValues(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	odd := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -3e-39, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 3e38, -1e-30}
	v := make([]float32, n)
	for i := range v {
		if rng.IntN(6) == 0 {
			v[i] = odd[rng.IntN(len(odd))]
			continue
		}
		v[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-4)))
	}
	return v
}

// same reports whether a and b are the same bits, or both NaN.
func same(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestBNPrefixes holds BatchNorm's vector passes to the Go loops they
// replace, bit for bit, over lengths with and without a tail.
func TestBNPrefixes(t *testing.T) {
	for _, n := range []int{0, 7, 8, 9, 64, 197} {
		x := bnValues(n, uint64(n))
		dy := bnValues(n, uint64(n)+100)
		for _, m := range []float32{0.37, -2.5e-3, 1e-39} {
			sq := make([]float32, n)
			for i := BNSquaresPrefix(x, sq, m); i < n; i++ {
				c := x[i] - m
				sq[i] = c * c
			}
			s := m*7 + 1
			y, xn := make([]float32, n), make([]float32, n)
			for i := BNNormalizePrefix(x, y, xn, m, s); i < n; i++ {
				q := (x[i] - m) / s
				y[i], xn[i] = q, q
			}
			dx := make([]float32, n)
			s1, s2, scale, std := m*3, -m, float32(-1.0/3), float32(0.71)
			for i := BNDxPrefix(x, dy, dx, s1, s2, scale, std); i < n; i++ {
				tt := float32(x[i]*s1) + s2
				dx[i] = (float32(tt*scale) + dy[i]) / std
			}
			for i := range n {
				c := x[i] - m
				q := c / s
				tt := float32(x[i]*s1) + s2
				want := (float32(tt*scale) + dy[i]) / std
				if !same(sq[i], c*c) || !same(y[i], q) || !same(xn[i], q) || !same(dx[i], want) {
					t.Fatalf("n %d m %g at %d (x %g dy %g): square %g want %g; normalised %g %g want %g; dx %g want %g",
						n, m, i, x[i], dy[i], sq[i], c*c, y[i], xn[i], q, dx[i], want)
				}
			}
		}
	}
}
