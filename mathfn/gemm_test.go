package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
)

// refGemm is the definition: a plain triple loop in float64.
func refGemm[T Float](ta, tb bool, m, n, k int, alpha float64, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var av, bv T
				if ta {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tb {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			old := 0.0
			if beta != 0 {
				old = beta * float64(c[i*ldc+j])
			}
			out[i*n+j] = alpha*s + old
		}
	}
	return out
}

// eachKernel runs f with each kernel this CPU has for T as the one gemm
// uses, the plain Go one included, and in the openblas build with the
// linked BLAS too.
func eachKernel[T Float](t *testing.T, f func(t *testing.T)) {
	var zero T
	if _, ok := any(zero).(float64); ok {
		eachKernelOf(t, &dgemmKernels, &ownDgemm, f)
		return
	}
	eachKernelOf(t, &sgemmKernels, &ownSgemm, f)
}

func eachKernelOf[T Float](t *testing.T, kernels *[]microKernel[T], own *bool, f func(t *testing.T)) {
	all, wasOwn := *kernels, *own
	defer func() { *kernels, *own = all, wasOwn }()
	*own = true
	for i, k := range all {
		*kernels = all[i:]
		t.Run(k.name, f)
	}
	if linkedGemm {
		*kernels, *own = all, false
		t.Run("linked BLAS", f)
	}
}

func testGemmShapes[T Float](t *testing.T, tol float64) {
	eachKernel[T](t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		shapes := [][3]int{{1, 1, 1}, {1, 1, 7}, {2, 3, 0}, {1, 37, 5}, {37, 1, 5}, {13, 17, 19}, {12, 32, 192},
			{25, 33, 193}, {241, 97, 389}, {3, 500, 7}, {97, 5, 1}, {64, 800, 500}, {260, 3100, 3},
			// few rows by a long k: the dot kernels (with B transposed)
			{10, 37, 300}, {1, 9, 129}, {3, 4, 257}, {16, 5, 1000}, {7, 100, 128}, {2, 6, 131},
			{1, 4, 136}, {1, 5, 152}, {4, 7, 144}, {5, 9, 200}, {11, 13, 136}, {17, 6, 130},
			// one row by a long k split over the workers
			{1, 300, 4000}, {2, 301, 3500},
			// last panels of 8 columns and of fewer (the half-width kernels;
			// AVX-512's: of 16 and fewer)
			{7, 24, 50}, {13, 40, 200}, {20, 49, 300}, {24, 16, 100}, {13, 48, 70}, {30, 10, 65},
			// split by rows, far more rows than k (a part's offset in A^T)
			{500, 64, 50}}
		// a last panel of every number of rows short of a tile (kernels
		// of fewer rows), and of 16-step blocks and a remainder (packing)
		for m := 13; m < 24; m++ {
			shapes = append(shapes, [3]int{m, 64, 37})
		}
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			// -short (the arm64 tests under qemu in CI, where the large
			// products take minutes) runs the large shapes once per
			// transposition, each with another alpha and beta: the blocking
			// over k, m and n still runs, on every kernel.
			thin := testing.Short() && m*n*k > 1<<20
			for ia, ta := range []bool{false, true} {
				for ib, tb := range []bool{false, true} {
					for i, ab := range [][2]float64{{1, 0}, {0.5, 1}, {-2, 0.25}, {0, 2}} {
						if thin && i != 2*ia+ib {
							continue
						}
						// Leading dimensions larger than the rows: the
						// matrices are windows of wider ones.
						lda, ldb, ldc := k+3, n+1, n+5
						if ta {
							lda = m + 2
						}
						if tb {
							ldb = k + 4
						}
						rowsA, rowsB := m, k
						if ta {
							rowsA = k
						}
						if tb {
							rowsB = n
						}
						a := randT[T](rng, rowsA*lda)
						b := randT[T](rng, rowsB*ldb)
						c := randT[T](rng, m*ldc)
						if ab[1] == 0 {
							for i := range c { // never read when beta is 0
								c[i] = T(math.NaN())
							}
						}
						want := refGemm(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
						trans := func(x bool) blas.Transpose {
							if x {
								return blas.Trans
							}
							return blas.NoTrans
						}
						before := append([]T(nil), c...)
						gemm(trans(ta), trans(tb), m, n, k, T(ab[0]), a, lda, b, ldb, T(ab[1]), c, ldc)
						for i := range m {
							for j := range ldc {
								got := float64(c[i*ldc+j])
								if j >= n { // outside the window: untouched
									if math.Float64bits(got) != math.Float64bits(float64(before[i*ldc+j])) {
										t.Fatalf("%v ta=%v tb=%v: C[%d][%d] outside the matrix changed", s, ta, tb, i, j)
									}
									continue
								}
								w := want[i*n+j]
								if math.Abs(got-w) > tol*(1+math.Abs(w))*math.Sqrt(float64(k+1)) {
									t.Fatalf("%v ta=%v tb=%v alpha=%v beta=%v: C[%d][%d] = %v, want %v", s, ta, tb, ab[0], ab[1], i, j, got, w)
								}
							}
						}
					}
				}
			}
		}
	})
}

func randT[T Float](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*2 - 1)
	}
	return s
}

// The GEMM against a triple loop: odd shapes (1x1, primes, k = 0, one row
// or column, shapes across the block sizes and the parallel split), all
// transposes, alpha and beta (beta 0 never reads C, which holds NaNs),
// windows of wider matrices; every kernel of this CPU.
func TestGemmAgainstTripleLoop(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testGemmShapes[float32](t, 2e-6) })
	t.Run("float64", func(t *testing.T) { testGemmShapes[float64](t, 1e-14) })
}

// Gemm allocates nothing once warm, serial or parallel.
func TestGemmDoesNotAllocate(t *testing.T) {
	for _, s := range [][3]int{{20, 30, 40}, {128, 512, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		Gemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, b, 0, c)
		if got := testing.AllocsPerRun(20, func() { Gemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, b, 0, c) }); got != 0 {
			t.Errorf("%v: %v allocations per Gemm", s, got)
		}
	}
}

func ExampleBLASName() {
	fmt.Println(BLASName != "")
	// Output: true
}

// The kernels flush subnormal floats to zero inside themselves only: the
// caller's arithmetic keeps its gradual underflow afterwards.
func TestGemmLeavesFloatModeAlone(t *testing.T) {
	a, b, c := []float32{1e-39, 1}, []float32{1, 1}, make([]float32, 1)
	Gemm(blas.NoTrans, blas.NoTrans, 1, 1, 2, 1, a, b, 0, c)
	tiny := float32(1e-38)
	if got := tiny / denormalDivisor; got == 0 {
		t.Errorf("1e-38/4 = 0 after a Gemm: flush-to-zero leaked out of the kernel")
	}
	if c[0] != 1 && c[0] != 1+1e-39 {
		t.Errorf("C = %v, want 1", c[0])
	}
}

// denormalDivisor is a variable so that the division happens at run time.
var denormalDivisor float32 = 4

// The openblas build multiplies with the own kernels where this CPU has
// assembly ones, unless the GEMM setting (GOCAFFE_GEMM) says otherwise;
// the default build always does.
func TestChooseOwnGemm(t *testing.T) {
	for _, c := range []struct {
		choice settings.GEMM
		best   string
		want   bool
	}{
		{settings.GEMMAuto, "AVX-512", true}, {settings.GEMMAuto, "AVX2", true}, {settings.GEMMAuto, "Go", !linkedGemm},
		{settings.GEMMAuto, "NEON", !linkedGemm}, {settings.GEMMOwn, "Go", true},
		{settings.GEMMOpenBLAS, "AVX-512", !linkedGemm}, {settings.GEMMOpenBLAS, "Go", !linkedGemm},
	} {
		if got := chooseOwnGemm(c.choice, c.best); got != c.want {
			t.Errorf("chooseOwnGemm(%v, %q) = %v, want %v", c.choice, c.best, got, c.want)
		}
	}
}

// The choice travels with the call: a CPU engine's GEMM decides what
// multiplies its products, whatever the package functions use, and every
// choice computes the same product. An engine in an interface costs no
// allocation.
func TestGemmChoicePerEngine(t *testing.T) {
	if g := (CPU[float32]{}).GEMM(); g != settings.GEMMAuto {
		t.Errorf("the zero CPU's choice is %v", g)
	}
	if g := NewCPU[float32](settings.GEMM(9)).GEMM(); g != settings.GEMMAuto {
		t.Errorf("a choice with no word became %v", g)
	}
	var sink Engine[float32, []float32]
	if n := testing.AllocsPerRun(10, func() { sink = NewCPU[float32](settings.GEMMOwn); _ = sink.Err() }); n != 0 {
		t.Errorf("an engine in an interface: %v allocations", n)
	}
	for _, c := range []struct {
		choice  settings.GEMM
		wantOwn bool
	}{
		{settings.GEMMAuto, ownSgemm}, {settings.GEMMOwn, true}, {settings.GEMMOpenBLAS, !linkedGemm},
	} {
		if got := ownGemmFor[float32](c.choice); got != c.wantOwn {
			t.Errorf("%v: own kernels %v, want %v", c.choice, got, c.wantOwn)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 37, 29, 41
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	want := refGemm(false, false, m, n, k, 1, a, k, b, n, 0, make([]float32, m*n), n)
	for _, choice := range []settings.GEMM{settings.GEMMAuto, settings.GEMMOwn, settings.GEMMOpenBLAS} {
		for _, serial := range []bool{false, true} {
			c := make([]float32, m*n)
			if e := NewCPU[float32](choice); serial {
				e.GemmSerial(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, b, 0, c)
			} else {
				e.Gemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, b, 0, c)
			}
			for i := range c {
				if d := math.Abs(float64(c[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
					t.Fatalf("%v (serial %v): C[%d] = %v, want %v", choice, serial, i, c[i], want[i])
				}
			}
		}
	}
	if BLASNameWith(settings.GEMMAuto) != BLASName {
		t.Errorf("BLASNameWith(auto) = %q, BLASName %q", BLASNameWith(settings.GEMMAuto), BLASName)
	}
	if linkedGemm && BLASNameWith(settings.GEMMOwn) == BLASNameWith(settings.GEMMOpenBLAS) {
		t.Errorf("the openblas build names own and openblas alike: %q", BLASNameWith(settings.GEMMOwn))
	}
}

// TestGemmSerialLDOnBlocks holds GemmSerialLD on blocks of larger matrices
// (rows lda, ldb and ldc apart) to GemmSerial on dense copies of the
// blocks, bit for bit, for every transpose, shapes about the kernels'
// tiles and blocks of k (the dot kernels' few rows included), beta 0 and
// 1; the rest of C is left alone.
func TestGemmSerialLDOnBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	e := NewCPU[float32](settings.GEMMAuto)
	shapes := [][3]int{{1, 1, 1}, {5, 17, 3}, {6, 16, 192}, {13, 33, 200}, {32, 75, 80}, {64, 56, 576}, {3, 40, 300}, {50, 7, 64}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, beta := range []float32{0, 1} {
					ar, ac := m, k
					if ta == blas.Trans {
						ar, ac = k, m
					}
					br, bc := k, n
					if tb == blas.Trans {
						br, bc = n, k
					}
					lda, ldb, ldc := ac+1+rng.IntN(9), bc+rng.IntN(9), n+2
					a, b, c := make([]float32, ar*lda), make([]float32, br*ldb), make([]float32, m*ldc)
					for _, x := range [][]float32{a, b, c} {
						for i := range x {
							x[i] = float32(rng.NormFloat64())
						}
					}
					da, db, dc := dense(a, ar, ac, lda), dense(b, br, bc, ldb), dense(c, m, n, ldc)
					GemmSerial(ta, tb, m, n, k, 1.5, da, db, beta, dc)
					old := append([]float32(nil), c...)
					e.GemmSerialLD(ta, tb, m, n, k, 1.5, a, lda, b, ldb, beta, c, ldc)
					for i := range m {
						for j := range ldc {
							got, want := c[i*ldc+j], old[i*ldc+j]
							if j < n {
								want = dc[i*n+j]
							}
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%v %v %dx%dx%d beta %v: C[%d][%d] = %v, want %v", ta, tb, m, n, k, beta, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// dense copies the rows x cols block of a, rows ld apart, into a dense
// matrix.
func dense(a []float32, rows, cols, ld int) []float32 {
	d := make([]float32, rows*cols)
	for i := range rows {
		copy(d[i*cols:(i+1)*cols], a[i*ld:i*ld+cols])
	}
	return d
}
