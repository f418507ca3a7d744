package mathfn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MulScalar, MulAddScalar and AddScaled give the Go loops' results bit for
// bit (a product rounded before a sum), through the vector kernels and
// the remainder alike: every length up to three vectors and a bit,
// special values, in place (x and y the same slice) and not, float32 and
// float64.
func TestScalarOpsBitForBit(t *testing.T) {
	testScalarOps[float32](t)
	testScalarOps[float64](t)
}

func testScalarOps[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specials := []T{T(math.Inf(1)), T(math.Inf(-1)), T(math.NaN()), T(math.Copysign(0, -1)), 0, 1e-40, -3e38, 3e38}
	for n := range 53 {
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64() * 100)
			if rng.IntN(5) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			}
		}
		f, b := T(rng.NormFloat64()), T(rng.NormFloat64())
		y0 := make([]T, n)
		for i := range y0 {
			y0[i] = T(rng.NormFloat64())
		}
		check := func(name string, got []T, want func(i int) T) {
			t.Helper()
			for i := range got {
				w := want(i)
				// bits (the sign of a zero counts), any NaN for a NaN
				g, wf := float64(got[i]), float64(w)
				if math.Float64bits(g) != math.Float64bits(wf) && !(math.IsNaN(g) && math.IsNaN(wf)) {
					t.Fatalf("%s, n %d: [%d] = %v, want %v", name, n, i, got[i], w)
				}
			}
		}
		y := make([]T, n)
		MulScalar(n, f, x, y)
		check("MulScalar", y, func(i int) T { return x[i] * f })
		MulAddScalar(n, f, b, x, y)
		check("MulAddScalar", y, func(i int) T { return T(x[i]*f) + b })
		copy(y, y0)
		AddScaled(n, f, x, y)
		check("AddScaled", y, func(i int) T { return y0[i] + T(x[i]*f) })
		in := append([]T(nil), x...)
		MulAddScalar(n, f, b, in, in)
		check("MulAddScalar in place", in, func(i int) T { return T(x[i]*f) + b })
	}
}
