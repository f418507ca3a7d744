// Package mathfn holds Caffe's math_functions: BLAS (gemm, gemv, axpy,
// axpby, scal, dot, asum, copy, set), the element-wise operations the layers
// are built from, and random number generation.
//
// The CPU functions work on Go slices. Like Caffe's caffe_cpu_* functions
// they take the element count n explicitly and read or write the first n
// elements of each slice; a slice shorter than n panics as any out-of-range
// index does. Matrices are dense and row-major, as in Caffe.
//
// GEMM runs on the package's own kernels (gemm.go: packed panels, cache
// blocking, Go assembly micro-kernels chosen by CPU feature, goroutines).
// The other BLAS routines go through gonum's blas32 and blas64 interfaces.
// The default build uses gonum's pure-Go implementation; building with
// `-tags openblas` installs OpenBLAS (through gonum.org/v1/netlib, needs
// Debian's libopenblas-dev) for this package and for anything else that
// uses gonum's blas32/blas64, and for GEMM on CPUs where the package has
// no assembly kernels (settings.GEMMOpenBLAS, GOCAFFE_GEMM=openblas: for
// every GEMM; see gemm_choice.go).
package mathfn

// Float is the element type of blobs and of the math here: float32 (the
// default everywhere) or float64 (for gradient checks and users who want it).
type Float interface {
	float32 | float64
}
