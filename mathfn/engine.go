package mathfn

import (
	"runtime"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
)

// Engine is the math of one kind of device over its own kind of array A:
// CPU[T] works on []T, *GPU[T] on cuda.DevicePtr. Code written against an
// Engine (a convolution, an inner product) runs unchanged on either, which
// is how a layer's CPU and GPU halves share one copy of their arithmetic.
//
// Counts and layouts are those of the package's CPU functions. Errors are
// sticky: after one, the remaining calls do nothing and Err reports it (the
// CPU engine never fails).
type Engine[T Float, A any] interface {
	Gemm(transA, transB blas.Transpose, m, n, k int, alpha T, a, b A, beta T, c A)
	Gemv(transA blas.Transpose, m, n int, alpha T, a, x A, beta T, y A)
	Axpy(n int, alpha T, x, y A)
	Axpby(n int, alpha T, x A, beta T, y A)
	Scal(n int, alpha T, x A)
	Scale(n int, alpha T, x, y A)
	Copy(n int, x, y A)
	Set(n int, alpha T, y A)
	AddScalar(n int, alpha T, y A)
	Dot(n int, x, y A) T
	Asum(n int, x A) T
	Add(n int, a, b, y A)
	Sub(n int, a, b, y A)
	Mul(n int, a, b, y A)
	Div(n int, a, b, y A)
	Sqr(n int, a, y A)
	Sqrt(n int, a, y A)
	Exp(n int, a, y A)
	Sign(n int, a, y A)
	Powx(n int, a A, b T, y A)
	Im2col(im A, g *ConvGeometry, col A)
	Col2im(col A, g *ConvGeometry, im A)
	// Offset returns a advanced by n elements.
	Offset(a A, n int) A
	Err() error
}

// CPU is the Engine of the host: each method calls the package function of
// the same name, the products with the code of its GEMM choice (NewCPU;
// the zero value's is settings.GEMMAuto, as Gemm's).
type CPU[T Float] struct {
	// gemm points into gemmChoices (nil: GEMMAuto), so that a CPU is
	// pointer-shaped: a View or Engine interface holding one, made for
	// every pass, allocates nothing.
	gemm *settings.GEMM
}

// gemmChoices are the choices NewCPU points to.
var gemmChoices = [...]settings.GEMM{settings.GEMMAuto, settings.GEMMOwn, settings.GEMMOpenBLAS}

// NewCPU returns the host's engine with the GEMM choice choice (a value
// with no word is GEMMAuto).
func NewCPU[T Float](choice settings.GEMM) CPU[T] {
	if int(choice) >= len(gemmChoices) {
		choice = settings.GEMMAuto
	}
	return CPU[T]{gemm: &gemmChoices[choice]}
}

// GEMM returns the engine's GEMM choice.
func (e CPU[T]) GEMM() settings.GEMM {
	if e.gemm == nil {
		return settings.GEMMAuto
	}
	return *e.gemm
}

var _ Engine[float32, []float32] = CPU[float32]{}

func (e CPU[T]) Gemm(transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	gemmPacked(runtime.GOMAXPROCS(0), e.GEMM(), transA, transB, m, n, k, alpha, a, b, beta, c)
}

// GemmSerial is Gemm on the calling goroutine alone (the package's
// GemmSerial with the engine's choice).
func (e CPU[T]) GemmSerial(transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	gemmPacked(1, e.GEMM(), transA, transB, m, n, k, alpha, a, b, beta, c)
}

// GemmSerialLD is GemmSerial on matrices whose rows are lda, ldb and ldc
// elements apart: blocks of larger ones (a convolution's few output rows
// of an image at a time, conv_chunks.go in layer/vision).
func (e CPU[T]) GemmSerialLD(transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmOn(1, e.GEMM(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (CPU[T]) Gemv(transA blas.Transpose, m, n int, alpha T, a, x []T, beta T, y []T) {
	Gemv(transA, m, n, alpha, a, x, beta, y)
}
func (CPU[T]) Axpy(n int, alpha T, x, y []T)              { Axpy(n, alpha, x, y) }
func (CPU[T]) Axpby(n int, alpha T, x []T, beta T, y []T) { Axpby(n, alpha, x, beta, y) }
func (CPU[T]) Scal(n int, alpha T, x []T)                 { Scal(n, alpha, x) }
func (CPU[T]) Scale(n int, alpha T, x, y []T)             { Scale(n, alpha, x, y) }
func (CPU[T]) Copy(n int, x, y []T)                       { Copy(n, x, y) }
func (CPU[T]) Set(n int, alpha T, y []T)                  { Set(n, alpha, y) }
func (CPU[T]) AddScalar(n int, alpha T, y []T)            { AddScalar(n, alpha, y) }
func (CPU[T]) Dot(n int, x, y []T) T                      { return Dot(n, x, y) }
func (CPU[T]) Asum(n int, x []T) T                        { return Asum(n, x) }
func (CPU[T]) Add(n int, a, b, y []T)                     { Add(n, a, b, y) }
func (CPU[T]) Sub(n int, a, b, y []T)                     { Sub(n, a, b, y) }
func (CPU[T]) Mul(n int, a, b, y []T)                     { Mul(n, a, b, y) }
func (CPU[T]) Div(n int, a, b, y []T)                     { Div(n, a, b, y) }
func (CPU[T]) Sqr(n int, a, y []T)                        { Sqr(n, a, y) }
func (CPU[T]) Sqrt(n int, a, y []T)                       { Sqrt(n, a, y) }
func (CPU[T]) Exp(n int, a, y []T)                        { Exp(n, a, y) }
func (CPU[T]) Sign(n int, a, y []T)                       { Sign(n, a, y) }
func (CPU[T]) Powx(n int, a []T, b T, y []T)              { Powx(n, a, b, y) }
func (CPU[T]) Im2col(im []T, g *ConvGeometry, col []T)    { Im2col(im, g, col) }
func (CPU[T]) Col2im(col []T, g *ConvGeometry, im []T)    { Col2im(col, g, im) }
func (CPU[T]) Offset(a []T, n int) []T                    { return a[n:] }
func (CPU[T]) Err() error                                 { return nil }
