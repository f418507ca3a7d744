package mathfn

import (
	"math"
	"testing"
)

// LRNScale's vector kernels give its Go loop's values bit for bit (the
// loop's formula, element by element, is the reference), over lengths
// with and without a tail, and those are within a few float32 ulp of
// x * s^-beta in float64.
func TestLRNScale(t *testing.T) {
	const alpha, k = float32(1e-4 / 5), float32(1)
	for _, n := range []int{1, 7, 8, 16, 37, 3136} {
		x := randSlice[float32](n, -3, 3, 1)
		sum := randSlice[float32](n, 0, 5e4, 2)
		sum[0] = 0
		for _, beta := range []float64{0.75, 0.5, 1} {
			y := make([]float32, n)
			if !LRNScale(x, sum, y, alpha, k, beta) {
				t.Fatalf("beta %v: not taken", beta)
			}
			for i := range y {
				s := float32(alpha*sum[i]) + k
				var d float32
				switch beta {
				case 0.75:
					d = sqrt32(s) * sqrt32(sqrt32(s))
				case 0.5:
					d = sqrt32(s)
				default:
					d = s
				}
				if want := x[i] / d; y[i] != want {
					t.Fatalf("n %d beta %v: y[%d] = %v, want %v", n, beta, i, y[i], want)
				}
				exact := float64(x[i]) * math.Pow(float64(k)+float64(alpha)*float64(sum[i]), -beta)
				if math.Abs(float64(y[i])-exact) > 4e-7*math.Abs(exact) {
					t.Fatalf("n %d beta %v: y[%d] = %v, x s^-beta = %v", n, beta, i, y[i], exact)
				}
			}
		}
	}
	if LRNScale(make([]float32, 4), make([]float32, 4), make([]float32, 4), alpha, k, 0.6) {
		t.Error("beta 0.6 taken, want false")
	}
}
