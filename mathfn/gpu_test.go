package mathfn

import (
	"math"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

func bytesOf[T Float](v []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(z)))
}

// upload copies v to a new device buffer.
func upload[T Float](t *testing.T, d *cuda.Device, v []T) cuda.DevicePtr {
	return cudatest.Upload(t, d, bytesOf(v))
}

// download copies n elements from the device.
func download[T Float](t *testing.T, d *cuda.Device, p cuda.DevicePtr, n int) []T {
	out := make([]T, n)
	if err := d.CopyDtoH(bytesOf(out), p); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAsCPU compares a GPU result with the CPU one: equal up to float
// rounding (relative 1e-5 for float32, 1e-12 for float64).
func sameAsCPU[T Float](t *testing.T, what string, gpu, cpu []T) {
	t.Helper()
	want := make([]float64, len(cpu))
	for i, v := range cpu {
		want[i] = float64(v)
	}
	closeTo(t, what, gpu, want)
}

func TestGPUMatchesCPU(t *testing.T) {
	forBothTypes(t, testGPUMatchesCPU[float32], testGPUMatchesCPU[float64])
}

// testGPUMatchesCPU runs every GPU math function and its CPU twin on the
// same inputs.
func testGPUMatchesCPU[T Float](t *testing.T) {
	d := cudatest.Device(t)
	const n = 10007 // several blocks and a ragged end
	a := randSlice[T](n, -3, 3, 21)
	b := randSlice[T](n, 0.5, 2, 22) // positive: divisor, log and sqrt argument
	y0 := randSlice[T](n, -1, 1, 23)
	a[0], a[1] = 0, T(math.Copysign(0, -1))
	pa, pb := upload(t, d, a), upload(t, d, b)
	py := cudatest.Alloc(t, d, len(bytesOf(y0)))

	type op struct {
		name string
		cpu  func(y []T)
		gpu  func(g *GPU[T], y cuda.DevicePtr)
	}
	ops := []op{
		{"Add", func(y []T) { Add(n, a, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Add(n, pa, pb, y) }},
		{"Sub", func(y []T) { Sub(n, a, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Sub(n, pa, pb, y) }},
		{"Mul", func(y []T) { Mul(n, a, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Mul(n, pa, pb, y) }},
		{"Div", func(y []T) { Div(n, a, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Div(n, pa, pb, y) }},
		{"Abs", func(y []T) { Abs(n, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Abs(n, pa, y) }},
		{"Exp", func(y []T) { Exp(n, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Exp(n, pa, y) }},
		{"Log", func(y []T) { Log(n, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Log(n, pb, y) }},
		{"Powx", func(y []T) { Powx(n, b, 2.5, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Powx(n, pb, 2.5, y) }},
		{"Sqr", func(y []T) { Sqr(n, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Sqr(n, pa, y) }},
		{"Sqrt", func(y []T) { Sqrt(n, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Sqrt(n, pb, y) }},
		{"Sign", func(y []T) { Sign(n, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Sign(n, pa, y) }},
		{"Sgnbit", func(y []T) { Sgnbit(n, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Sgnbit(n, pa, y) }},
		{"Set", func(y []T) { Set(n, 1.25, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Set(n, 1.25, y) }},
		{"AddScalar", func(y []T) { AddScalar(n, -0.5, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.AddScalar(n, -0.5, y) }},
		{"Axpy", func(y []T) { Axpy(n, 0.3, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Axpy(n, 0.3, pa, y) }},
		{"Axpby", func(y []T) { Axpby(n, 0.3, a, -2, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Axpby(n, 0.3, pa, -2, y) }},
		{"Scal", func(y []T) { Scal(n, -1.5, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Scal(n, -1.5, y) }},
		{"Scale", func(y []T) { Scale(n, 4, a, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Scale(n, 4, pa, y) }},
		{"Copy", func(y []T) { Copy(n, b, y) }, func(g *GPU[T], y cuda.DevicePtr) { g.Copy(n, pb, y) }},
	}
	for _, o := range ops {
		cpu := append([]T(nil), y0...)
		o.cpu(cpu)
		if err := d.CopyHtoD(py, bytesOf(y0)); err != nil { // the same starting y
			t.Fatal(err)
		}
		g := newGPU[T](t, d)
		o.gpu(&g, py)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		sameAsCPU(t, o.name, download[T](t, d, py, n), cpu)
	}

	g := newGPU[T](t, d)
	dot, asum := g.Dot(n, pa, pb), g.Asum(n, pa)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	scalarCloseRel(t, "Dot", dot, Dot(n, a, b))
	scalarCloseRel(t, "Asum", asum, Asum(n, a))
}

// scalarCloseRel compares reductions, whose summation order differs between
// cuBLAS and the CPU: relative 1e-4 for float32, 1e-10 for float64.
func scalarCloseRel[T Float](t *testing.T, what string, got, want T) {
	t.Helper()
	tolerance := 1e-10
	if !isF64[T]() {
		tolerance = 1e-4
	}
	if math.Abs(float64(got-want)) > tolerance*math.Max(1, math.Abs(float64(want))) {
		t.Errorf("%s = %v on the GPU, %v on the CPU", what, got, want)
	}
}

func TestGPUGemmGemv(t *testing.T) {
	forBothTypes(t, testGPUGemmGemv[float32], testGPUGemmGemv[float64])
}

func testGPUGemmGemv[T Float](t *testing.T) {
	d := cudatest.Device(t)
	const m, n, k = 37, 53, 29
	for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			a, b, c := randSlice[T](m*k, -1, 1, 31), randSlice[T](k*n, -1, 1, 32), randSlice[T](m*n, -1, 1, 33)
			pa, pb, pc := upload(t, d, a), upload(t, d, b), upload(t, d, c)
			g := newGPU[T](t, d)
			g.Gemm(ta, tb, m, n, k, 1.5, pa, pb, -0.5, pc)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			Gemm(ta, tb, m, n, k, 1.5, a, b, -0.5, c)
			sameAsCPU(t, "Gemm", download[T](t, d, pc, m*n), c)
		}
		a := randSlice[T](m*n, -1, 1, 34)
		xn, ym := n, m
		if ta == blas.Trans {
			xn, ym = m, n
		}
		x, y := randSlice[T](xn, -1, 1, 35), randSlice[T](ym, -1, 1, 36)
		pa, px, py := upload(t, d, a), upload(t, d, x), upload(t, d, y)
		g := newGPU[T](t, d)
		g.Gemv(ta, m, n, 2, pa, px, 0.5, py)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		Gemv(ta, m, n, 2, a, x, 0.5, y)
		sameAsCPU(t, "Gemv", download[T](t, d, py, ym), y)
	}
}

func TestGPUGemmStrided(t *testing.T) {
	forBothTypes(t, testGPUGemmStrided[float32], testGPUGemmStrided[float64])
}

// GemmStrided against a triple loop: padded leading dimensions, gaps
// between the matrices of a batch, and a stride of 0 sharing one operand.
func testGPUGemmStrided[T Float](t *testing.T) {
	d := cudatest.Device(t)
	const m, n, k, batch = 13, 11, 7, 5
	for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			ar, ac, br, bc := m, k, k, n
			if ta == blas.Trans {
				ar, ac = k, m
			}
			if tb == blas.Trans {
				br, bc = n, k
			}
			lda, ldb, ldc := ac+2, bc+1, n+3
			sa, sb, sc := ar*lda+4, 0, m*ldc+1 // B shared by every product
			a := randSlice[T](batch*sa, -1, 1, 41)
			b := randSlice[T](br*ldb, -1, 1, 42)
			c := randSlice[T](batch*sc, -1, 1, 43)
			pa, pb, pc := upload(t, d, a), upload(t, d, b), upload(t, d, c)
			g := newGPU[T](t, d)
			g.GemmStrided(ta, tb, m, n, k, 1.5, pa, lda, sa, pb, ldb, sb, -0.5, pc, ldc, sc, batch)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			at := func(x []T, ld int, tr blas.Transpose, i, j int) float64 {
				if tr == blas.Trans {
					i, j = j, i
				}
				return float64(x[i*ld+j])
			}
			for q := range batch {
				for i := range m {
					for j := range n {
						var sum float64
						for p := range k {
							sum += at(a[q*sa:], lda, ta, i, p) * at(b, ldb, tb, p, j)
						}
						c[q*sc+i*ldc+j] = T(1.5*sum - 0.5*float64(c[q*sc+i*ldc+j]))
					}
				}
			}
			sameAsCPU(t, "GemmStrided", download[T](t, d, pc, batch*sc), c)
		}
	}
}

func TestGPURNG(t *testing.T) { forBothTypes(t, testGPURNG[float32], testGPURNG[float64]) }

// The device generators have the distributions asked for, and the same seed
// gives the same numbers.
func testGPURNG[T Float](t *testing.T) {
	d := cudatest.Device(t)
	const n = 1 << 20
	var z T
	p := cudatest.Alloc(t, d, n*int(unsafe.Sizeof(z)))
	g := newGPU[T](t, d)
	g.RngUniform(n, -1, 3, p, NewRNG(1))
	u := download[T](t, d, p, n)
	g.RngGaussian(n, 2, 0.5, p, NewRNG(2))
	gs := download[T](t, d, p, n)
	mask := cudatest.Alloc(t, d, 4*n)
	g.RngBernoulli(n, 0.3, mask, NewRNG(3))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range u {
		if v < -1 || v > 3 {
			t.Fatalf("uniform sample %v outside [-1, 3]", v)
		}
		sum += float64(v)
	}
	if m := sum / n; math.Abs(m-1) > 6*(4/math.Sqrt(12))/math.Sqrt(n) {
		t.Errorf("uniform mean %v, want 1", m)
	}
	var s, ss float64
	for _, v := range gs {
		s += float64(v)
		ss += float64(v) * float64(v)
	}
	mean := s / n
	std := math.Sqrt(ss/n - mean*mean)
	if math.Abs(mean-2) > 6*0.5/math.Sqrt(n) || math.Abs(std-0.5) > 0.5*6*math.Sqrt(0.5/n) {
		t.Errorf("gaussian mean %v std %v, want 2 and 0.5", mean, std)
	}
	bits := make([]uint32, n)
	d.CopyDtoH(unsafe.Slice((*byte)(unsafe.Pointer(&bits[0])), 4*n), mask)
	ones := 0
	for _, v := range bits {
		if v > 1 {
			t.Fatalf("bernoulli sample %d", v)
		}
		ones += int(v)
	}
	if f := float64(ones) / n; math.Abs(f-0.3) > 6*math.Sqrt(0.3*0.7/n) {
		t.Errorf("bernoulli fraction %v, want 0.3", f)
	}
	g.RngGaussian(n, 2, 0.5, p, NewRNG(2))
	again := download[T](t, d, p, n)
	for i := range again {
		if again[i] != gs[i] {
			t.Fatal("the same seed gave different device samples")
		}
	}
}

// BenchmarkGPUSgemmRowMajor times the row-major Gemm (through cuBLAS) at
// LeNet's and CaffeNet's shapes.
func BenchmarkGPUSgemmRowMajor(b *testing.B) {
	d := cudatest.Device(b)
	for _, s := range []struct {
		name    string
		m, n, k int
	}{
		{"lenet_conv2_50x64x500", 50, 64, 500},
		{"caffenet_fc6_256x4096x9216", 256, 4096, 9216},
	} {
		b.Run(s.name, func(b *testing.B) {
			pa := cudatest.Upload(b, d, bytesOf(randSlice[float32](s.m*s.k, -1, 1, 1)))
			pb := cudatest.Upload(b, d, bytesOf(randSlice[float32](s.k*s.n, -1, 1, 2)))
			pc := cudatest.Alloc(b, d, 4*s.m*s.n)
			g := newGPU[float32](b, d)
			for b.Loop() {
				g.Gemm(blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, pa, pb, 0, pc)
			}
			d.Stream().Synchronize()
			if err := g.Err(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
		})
	}
}

func TestGPUIm2col(t *testing.T) { forBothTypes(t, testGPUIm2col[float32], testGPUIm2col[float64]) }

// The device im2col and col2im, 2-D and N-D, equal the host ones.
func testGPUIm2col[T Float](t *testing.T) {
	d := cudatest.Device(t)
	for i, geo := range testGeometries {
		for _, forceND := range []bool{false, true} {
			geo.ForceND = forceND
			im := randSlice[T](geo.ImSize(), -1, 1, uint64(i))
			col := randSlice[T](geo.ColSize(), -1, 1, uint64(i+10))
			pim, pcol := upload(t, d, im), upload(t, d, col)
			cpuCol := make([]T, geo.ColSize())
			Im2col(im, geo, cpuCol)
			cpuIm := make([]T, geo.ImSize())
			Col2im(col, geo, cpuIm)
			g := newGPU[T](t, d)
			outCol := cudatest.Alloc(t, d, len(bytesOf(cpuCol)))
			outIm := cudatest.Alloc(t, d, len(bytesOf(cpuIm)))
			g.Im2col(pim, geo, outCol)
			g.Col2im(pcol, geo, outIm)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			sameAsCPU(t, "Im2col", download[T](t, d, outCol, geo.ColSize()), cpuCol)
			sameAsCPU(t, "Col2im", download[T](t, d, outIm, geo.ImSize()), cpuIm)
		}
		geo.ForceND = false
	}
}

// newGPU returns a GPU with the math kernels, loaded for d.
func newGPU[T Float](t testing.TB, d *cuda.Device) GPU[T] {
	t.Helper()
	k, err := LoadKernels(d)
	if err != nil {
		t.Fatal(err)
	}
	return NewGPU[T](d, k)
}
