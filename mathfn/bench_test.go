package mathfn

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkSgemm measures float32 gemm at 512^3 and at LeNet's two big
// products: conv2 (50 outputs x 64 positions x 500 = 20*5*5 inputs) and ip1
// (batch 64 x 500 outputs x 800 inputs). It reports GFLOP/s; compare the
// default build with `-tags openblas`.
func BenchmarkSgemm(b *testing.B) {
	b.Logf("BLAS: %s", BLASName)
	for _, s := range []struct {
		name    string
		m, n, k int
	}{
		{"512x512x512", 512, 512, 512},
		{"lenet_conv2_50x64x500", 50, 64, 500},
		{"lenet_ip1_64x500x800", 64, 500, 800},
	} {
		b.Run(s.name, func(b *testing.B) {
			a := randSlice[float32](s.m*s.k, -1, 1, 1)
			bm := randSlice[float32](s.k*s.n, -1, 1, 2)
			c := make([]float32, s.m*s.n)
			for b.Loop() {
				Gemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, bm, 0, c)
			}
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func ExampleGemm() {
	// C (2x2) = A (2x3) * B (3x2), row-major.
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 0, 1, 1, 1}
	c := make([]float32, 4)
	Gemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, b, 0, c)
	fmt.Println(c)
	// Output: [4 5 10 11]
}
