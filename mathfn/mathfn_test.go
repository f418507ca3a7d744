package mathfn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func randSlice[T Float](n int, lo, hi float64, seed uint64) []T {
	r := make([]T, n)
	RngUniform(n, T(lo), T(hi), r, NewRNG(seed))
	return r
}

// tol is the comparison tolerance for results of a few operations.
func tol[T Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1e-5
	}
	return 1e-12
}

func closeTo[T Float](t *testing.T, what string, got []T, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol[T]()*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func scalarClose[T Float](t *testing.T, what string, got T, want float64) {
	t.Helper()
	closeTo(t, what, []T{got}, []float64{want})
}

func forBothTypes(t *testing.T, f32, f64 func(*testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
}

func TestGemm(t *testing.T) { forBothTypes(t, testGemm[float32], testGemm[float64]) }

// testGemm checks every transpose combination on non-square shapes against
// the triple loop, with alpha and beta not 0 or 1.
func testGemm[T Float](t *testing.T) {
	const m, n, k = 5, 7, 3
	for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			a := randSlice[T](m*k, -1, 1, 1)
			b := randSlice[T](k*n, -1, 1, 2)
			c := randSlice[T](m*n, -1, 1, 3)
			want := make([]float64, m*n)
			for i := range m {
				for j := range n {
					var s float64
					for p := range k {
						av := a[i*k+p]
						if ta == blas.Trans {
							av = a[p*m+i]
						}
						bv := b[p*n+j]
						if tb == blas.Trans {
							bv = b[j*k+p]
						}
						s += float64(av) * float64(bv)
					}
					want[i*n+j] = 1.5*s + -0.5*float64(c[i*n+j])
				}
			}
			Gemm(ta, tb, m, n, k, 1.5, a, b, -0.5, c)
			closeTo(t, "Gemm", c, want)
		}
	}
	// Empty inner dimension: C = beta*C.
	c := []T{1, 2}
	Gemm(blas.NoTrans, blas.NoTrans, 1, 2, 0, 1, nil, nil, 2, c)
	closeTo(t, "Gemm with k=0", c, []float64{2, 4})
}

func TestGemv(t *testing.T) { forBothTypes(t, testGemv[float32], testGemv[float64]) }

func testGemv[T Float](t *testing.T) {
	const m, n = 4, 6
	a := randSlice[T](m*n, -1, 1, 4)
	x := randSlice[T](n, -1, 1, 5)
	y := randSlice[T](m, -1, 1, 6)
	want := make([]float64, m)
	for i := range m {
		var s float64
		for j := range n {
			s += float64(a[i*n+j]) * float64(x[j])
		}
		want[i] = 2*s + 3*float64(y[i])
	}
	Gemv(blas.NoTrans, m, n, 2, a, x, 3, y)
	closeTo(t, "Gemv NoTrans", y, want)

	xt := randSlice[T](m, -1, 1, 7)
	yt := randSlice[T](n, -1, 1, 8)
	wantT := make([]float64, n)
	for j := range n {
		var s float64
		for i := range m {
			s += float64(a[i*n+j]) * float64(xt[i])
		}
		wantT[j] = -1*s + 0.5*float64(yt[j])
	}
	Gemv(blas.Trans, m, n, -1, a, xt, 0.5, yt)
	closeTo(t, "Gemv Trans", yt, wantT)
}

func TestLevel1(t *testing.T) { forBothTypes(t, testLevel1[float32], testLevel1[float64]) }

func testLevel1[T Float](t *testing.T) {
	const n = 37
	x := randSlice[T](n, -2, 2, 9)
	y := randSlice[T](n, -2, 2, 10)
	expect := func(f func(i int) float64) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = f(i)
		}
		return w
	}
	clone := func(v []T) []T { return append([]T(nil), v...) }

	got := clone(y)
	Axpy(n, 0.7, x, got)
	closeTo(t, "Axpy", got, expect(func(i int) float64 { return 0.7*float64(x[i]) + float64(y[i]) }))

	got = clone(y)
	Axpby(n, 0.7, x, -1.3, got)
	closeTo(t, "Axpby", got, expect(func(i int) float64 { return 0.7*float64(x[i]) - 1.3*float64(y[i]) }))

	got = clone(x)
	Scal(n, -3, got)
	closeTo(t, "Scal", got, expect(func(i int) float64 { return -3 * float64(x[i]) }))

	got = make([]T, n)
	Scale(n, 0.5, x, got)
	closeTo(t, "Scale", got, expect(func(i int) float64 { return 0.5 * float64(x[i]) }))

	var dot, asum, strided float64
	for i := range n {
		dot += float64(x[i]) * float64(y[i])
		asum += math.Abs(float64(x[i]))
	}
	for i := range n / 3 {
		strided += float64(x[3*i]) * float64(y[2*i])
	}
	scalarClose(t, "Dot", Dot(n, x, y), dot)
	scalarClose(t, "Asum", Asum(n, x), asum)
	scalarClose(t, "StridedDot", StridedDot(n/3, x, 3, y, 2), strided)

	got = make([]T, n+1)
	Copy(n, x, got)
	closeTo(t, "Copy", got[:n], expect(func(i int) float64 { return float64(x[i]) }))
	if got[n] != 0 {
		t.Error("Copy wrote past n")
	}
	Set(n, 2.5, got)
	closeTo(t, "Set", got[:n], expect(func(int) float64 { return 2.5 }))
	Set(n, 0, got)
	closeTo(t, "Set 0", got[:n], expect(func(int) float64 { return 0 }))
}

func TestElementwise(t *testing.T) {
	forBothTypes(t, testElementwise[float32], testElementwise[float64])
}

func testElementwise[T Float](t *testing.T) {
	const n = 41
	a := randSlice[T](n, -3, 3, 11)
	b := randSlice[T](n, 0.5, 2, 12) // positive: a divisor, a log argument
	a[0], a[1] = 0, T(math.Copysign(0, -1))
	y := make([]T, n)
	each := func(f func(a, b float64) float64) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = f(float64(a[i]), float64(b[i]))
		}
		return w
	}
	cases := []struct {
		name string
		run  func()
		want []float64
	}{
		{"Add", func() { Add(n, a, b, y) }, each(func(a, b float64) float64 { return a + b })},
		{"Sub", func() { Sub(n, a, b, y) }, each(func(a, b float64) float64 { return a - b })},
		{"Mul", func() { Mul(n, a, b, y) }, each(func(a, b float64) float64 { return a * b })},
		{"Div", func() { Div(n, a, b, y) }, each(func(a, b float64) float64 { return a / b })},
		{"Abs", func() { Abs(n, a, y) }, each(func(a, _ float64) float64 { return math.Abs(a) })},
		{"Exp", func() { Exp(n, a, y) }, each(func(a, _ float64) float64 { return math.Exp(a) })},
		{"Log", func() { Log(n, b, y) }, each(func(_, b float64) float64 { return math.Log(b) })},
		{"Powx", func() { Powx(n, b, 1.7, y) }, each(func(_, b float64) float64 { return math.Pow(b, 1.7) })},
		{"Sqr", func() { Sqr(n, a, y) }, each(func(a, _ float64) float64 { return a * a })},
		{"Sqrt", func() { Sqrt(n, b, y) }, each(func(_, b float64) float64 { return math.Sqrt(b) })},
		{"Sign", func() { Sign(n, a, y) }, each(func(a, _ float64) float64 {
			if a > 0 {
				return 1
			} else if a < 0 {
				return -1
			}
			return 0
		})},
		{"Sgnbit", func() { Sgnbit(n, a, y) }, each(func(a, _ float64) float64 {
			if math.Signbit(a) {
				return 1
			}
			return 0
		})},
		{"AddScalar", func() { copy(y, a); AddScalar(n, 0.25, y) }, each(func(a, _ float64) float64 { return a + 0.25 })},
	}
	for _, c := range cases {
		clear(y)
		c.run()
		closeTo(t, c.name, y, c.want)
	}
	negZero := []T{T(math.Copysign(0, -1))}
	if Sgnbit(1, negZero, negZero); negZero[0] != 1 {
		t.Error("Sgnbit(-0) = 0, want 1")
	}
}

func TestShortSlicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add with a slice shorter than n did not panic")
		}
	}()
	Add(3, []float32{1, 2, 3}, []float32{1, 2}, make([]float32, 3))
}

func TestRNG(t *testing.T) { forBothTypes(t, testRNG[float32], testRNG[float64]) }

func testRNG[T Float](t *testing.T) {
	const n = 100000
	r := make([]T, n)
	RngUniform(n, -1, 3, r, NewRNG(1))
	var sum float64
	for _, v := range r {
		if v < -1 || v > 3 {
			t.Fatalf("uniform sample %v outside [-1, 3]", v)
		}
		sum += float64(v)
	}
	// mean 1, std 4/sqrt(12); 6 standard errors of the mean.
	if m := sum / n; math.Abs(m-1) > 6*(4/math.Sqrt(12))/math.Sqrt(n) {
		t.Errorf("uniform mean %v, want 1", m)
	}

	RngGaussian(n, 2, 0.5, r, NewRNG(2))
	var s, ss float64
	for _, v := range r {
		s += float64(v)
		ss += float64(v) * float64(v)
	}
	mean := s / n
	std := math.Sqrt(ss/n - mean*mean)
	if math.Abs(mean-2) > 6*0.5/math.Sqrt(n) || math.Abs(std-0.5) > 0.5*6*math.Sqrt(0.5/n) {
		t.Errorf("gaussian mean %v std %v, want 2 and 0.5", mean, std)
	}

	mask := make([]uint32, n)
	RngBernoulli(n, 0.3, mask, NewRNG(3))
	ones := 0
	for _, v := range mask {
		if v != 0 && v != 1 {
			t.Fatalf("bernoulli sample %d", v)
		}
		ones += int(v)
	}
	if p := float64(ones) / n; math.Abs(p-0.3) > 6*math.Sqrt(0.3*0.7/n) {
		t.Errorf("bernoulli fraction %v, want 0.3", p)
	}

	a, b := make([]T, 8), make([]T, 8)
	RngGaussian(8, 0, 1, a, NewRNG(42))
	RngGaussian(8, 0, 1, b, NewRNG(42))
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed gave different samples")
		}
	}
}

func TestRNGArgumentPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"uniform a > b":     func() { RngUniform(1, 2, 1, make([]float32, 1), NewRNG(1)) },
		"gaussian sigma 0":  func() { RngGaussian(1, 0, 0, make([]float32, 1), NewRNG(1)) },
		"bernoulli p = 1.5": func() { RngBernoulli(1, 1.5, make([]int, 1), NewRNG(1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// Add, Sub, Mul and Div give the Go loops' IEEE results bit for bit,
// through the vector kernels and the remainder alike: every length up to
// three vectors and a bit, special values (infinities, NaNs, zeros of
// both signs, subnormals, overflow), in place and not, float32 and
// float64.
func TestBinaryOpsBitForBit(t *testing.T) {
	testBinaryOps[float32](t)
	testBinaryOps[float64](t)
}

func testBinaryOps[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []T{T(math.Inf(1)), T(math.Inf(-1)), T(math.NaN()), T(math.Copysign(0, -1)), 0, 1e-40, -3e38, 3e38, 1}
	ops := []struct {
		name string
		fn   func(n int, a, b, y []T)
		want func(a, b T) T
	}{
		{"Add", Add[T], func(a, b T) T { return a + b }},
		{"Sub", Sub[T], func(a, b T) T { return a - b }},
		{"Mul", Mul[T], func(a, b T) T { return a * b }},
		{"Div", Div[T], func(a, b T) T { return a / b }},
	}
	for n := range 53 {
		a, b := make([]T, n), make([]T, n)
		for i := range n {
			a[i], b[i] = T(rng.NormFloat64()*100), T(rng.NormFloat64())
			if rng.IntN(4) == 0 {
				a[i] = specials[rng.IntN(len(specials))]
			}
			if rng.IntN(4) == 0 {
				b[i] = specials[rng.IntN(len(specials))]
			}
		}
		for _, op := range ops {
			y := make([]T, n)
			op.fn(n, a, b, y)
			in := append([]T(nil), a...)
			op.fn(n, in, b, in)
			for i := range n {
				w := float64(op.want(a[i], b[i]))
				for _, got := range []float64{float64(y[i]), float64(in[i])} {
					if math.Float64bits(got) != math.Float64bits(w) && !(math.IsNaN(got) && math.IsNaN(w)) {
						t.Fatalf("%s n %d: %v op %v = %v, want %v", op.name, n, a[i], b[i], got, w)
					}
				}
			}
		}
	}
}
