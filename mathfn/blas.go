package mathfn

import (
	"runtime"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Gemm computes C = alpha*op(A)*op(B) + beta*C where op(A) is m x k, op(B)
// is k x n and C is m x n, all row-major (Caffe's caffe_cpu_gemm). A is
// stored m x k, or k x m when transA is blas.Trans; B likewise. The code
// that multiplies is settings.GEMMAuto's choice; CPU.Gemm takes another.
func Gemm[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	gemmPacked(runtime.GOMAXPROCS(0), settings.GEMMAuto, transA, transB, m, n, k, alpha, a, b, beta, c)
}

// GemmSerial is Gemm on the calling goroutine alone, for work that is
// already spread over the cores (see Parallel).
func GemmSerial[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	gemmPacked(1, settings.GEMMAuto, transA, transB, m, n, k, alpha, a, b, beta, c)
}

// gemmPacked is Gemm of densely stored matrices on at most workers
// goroutines with choice's code.
func gemmPacked[T Float](workers int, choice settings.GEMM, transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	if m == 0 || n == 0 {
		return
	}
	lda, ldb := k, n
	if transA != blas.NoTrans {
		lda = m
	}
	if transB != blas.NoTrans {
		ldb = k
	}
	gemmOn(workers, choice, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, n)
}

// Gemv computes y = alpha*op(A)*x + beta*y where A is m x n row-major
// (Caffe's caffe_cpu_gemv): with blas.NoTrans x has n elements and y m; with
// blas.Trans x has m and y n.
func Gemv[T Float](transA blas.Transpose, m, n int, alpha T, a, x []T, beta T, y []T) {
	if m == 0 || n == 0 {
		return
	}
	switch y := any(y).(type) {
	case []float32:
		blas32.Implementation().Sgemv(transA, m, n, float32(alpha), any(a).([]float32), n,
			any(x).([]float32), 1, float32(beta), y, 1)
	case []float64:
		blas64.Implementation().Dgemv(transA, m, n, float64(alpha), any(a).([]float64), n,
			any(x).([]float64), 1, float64(beta), y, 1)
	}
}

// Axpy computes y += alpha*x over n elements.
func Axpy[T Float](n int, alpha T, x, y []T) {
	if n == 0 {
		return
	}
	switch y := any(y).(type) {
	case []float32:
		blas32.Implementation().Saxpy(n, float32(alpha), any(x).([]float32), 1, y, 1)
	case []float64:
		blas64.Implementation().Daxpy(n, float64(alpha), any(x).([]float64), 1, y, 1)
	}
}

// Axpby computes y = alpha*x + beta*y over n elements.
func Axpby[T Float](n int, alpha T, x []T, beta T, y []T) {
	Scal(n, beta, y)
	Axpy(n, alpha, x, y)
}

// Scal computes x *= alpha over n elements.
func Scal[T Float](n int, alpha T, x []T) {
	if n == 0 {
		return
	}
	switch x := any(x).(type) {
	case []float32:
		blas32.Implementation().Sscal(n, float32(alpha), x, 1)
	case []float64:
		blas64.Implementation().Dscal(n, float64(alpha), x, 1)
	}
}

// Scale computes y = alpha*x over n elements (Caffe's caffe_cpu_scale).
func Scale[T Float](n int, alpha T, x, y []T) {
	copy(y[:n], x[:n])
	Scal(n, alpha, y)
}

// Dot returns the dot product of the first n elements of x and y.
func Dot[T Float](n int, x, y []T) T {
	return StridedDot(n, x, 1, y, 1)
}

// StridedDot returns sum x[i*incx]*y[i*incy] for i < n.
func StridedDot[T Float](n int, x []T, incx int, y []T, incy int) T {
	if n == 0 {
		return 0
	}
	switch x := any(x).(type) {
	case []float32:
		return T(blas32.Implementation().Sdot(n, x, incx, any(y).([]float32), incy))
	case []float64:
		return T(blas64.Implementation().Ddot(n, x, incx, any(y).([]float64), incy))
	}
	panic("unreachable")
}

// Asum returns the sum of the absolute values of the first n elements.
func Asum[T Float](n int, x []T) T {
	if n == 0 {
		return 0
	}
	switch x := any(x).(type) {
	case []float32:
		return T(blas32.Implementation().Sasum(n, x, 1))
	case []float64:
		return T(blas64.Implementation().Dasum(n, x, 1))
	}
	panic("unreachable")
}

// Copy copies the first n elements of x to y.
func Copy[T Float](n int, x, y []T) {
	copy(y[:n], x[:n])
}

// Set sets the first n elements of y to alpha.
func Set[T Float](n int, alpha T, y []T) {
	y = y[:n]
	if alpha == 0 {
		clear(y)
		return
	}
	for i := range y {
		y[i] = alpha
	}
}
