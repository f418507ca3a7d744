//go:build arm64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The NEON micro-kernels of gemm_arm64.s (written by internal/neongen):
// C[mr x nr] (row stride ldc elements) += the product of a packed panel
// of op(A) (mr values per step) and of op(B) (nr values per step) over k
// steps. float32 tiles are 8 x 12, float64 8 x 6: 24 accumulators of the
// 32 vector registers, the rest holding a step of the panels.

//go:noescape
func sgemmKernelNEON(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEON(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sdotKernelNEON(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

//go:noescape
func ddotKernelNEON(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

// The kernels of the first 1 to 7 rows of an 8-row A~ panel (a product's
// last rows), straight into C.
//
//go:noescape
func sgemmKernelNEONRows1(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows2(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows3(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows4(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows5(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows6(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelNEONRows7(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows1(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows2(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows3(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows4(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows5(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows6(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelNEONRows7(k int, a, b, c unsafe.Pointer, ldc int)

// neon says whether the NEON kernels run. Every arm64 CPU has Advanced
// SIMD (Go's own runtime uses it unconditionally), and golang.org/x/sys/cpu
// reports it on every system it knows; the choice is still made at run
// time, from the CPU, as on amd64, so that the kernel lists are built the
// same way on both and a CPU reported without it falls back to Go.
var neon = cpu.ARM64.HasASIMD

// archSgemmKernels returns the float32 kernels this CPU can run, best
// first.
func archSgemmKernels() []microKernel[float32] {
	if !neon {
		return nil
	}
	rows := []func(k int, a, b, c []float32, ldc int){nil,
		asmKernel[float32](sgemmKernelNEONRows1), asmKernel[float32](sgemmKernelNEONRows2), asmKernel[float32](sgemmKernelNEONRows3),
		asmKernel[float32](sgemmKernelNEONRows4), asmKernel[float32](sgemmKernelNEONRows5), asmKernel[float32](sgemmKernelNEONRows6),
		asmKernel[float32](sgemmKernelNEONRows7)}
	return []microKernel[float32]{{name: "NEON", mr: 8, nr: 12, fn: asmKernel[float32](sgemmKernelNEON),
		dot: asmDot[float32](sdotKernelNEON, 4, 4), rows: rows}}
}

// archDgemmKernels returns the float64 kernels this CPU can run, best
// first.
func archDgemmKernels() []microKernel[float64] {
	if !neon {
		return nil
	}
	rows := []func(k int, a, b, c []float64, ldc int){nil,
		asmKernel[float64](dgemmKernelNEONRows1), asmKernel[float64](dgemmKernelNEONRows2), asmKernel[float64](dgemmKernelNEONRows3),
		asmKernel[float64](dgemmKernelNEONRows4), asmKernel[float64](dgemmKernelNEONRows5), asmKernel[float64](dgemmKernelNEONRows6),
		asmKernel[float64](dgemmKernelNEONRows7)}
	return []microKernel[float64]{{name: "NEON", mr: 8, nr: 6, fn: asmKernel[float64](dgemmKernelNEON),
		dot: asmDot[float64](ddotKernelNEON, 2, 4), rows: rows}}
}

// asmKernel adapts an assembly kernel to the driver's signature (as
// gemm_amd64.go's, which this build does not compile).
func asmKernel[T Float](f func(k int, a, b, c unsafe.Pointer, ldc int)) func(k int, a, b, c []T, ldc int) {
	return func(k int, a, b, c []T, ldc int) {
		f(k, unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(c)), ldc)
	}
}

// asmDot adapts an assembly dot kernel of vectors of lanes elements: the
// aRows*4 dot products of rows a[i*lda:] (i < aRows) and b[j*ldb:] (j <
// 4) over k (a multiple of lanes) as aRows*4 vectors of lanes partial sums
// in out.
func asmDot[T Float](f func(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer), lanes, aRows int) *dotKernel[T] {
	return &dotKernel[T]{lanes: lanes, aRows: aRows, fn: func(k int, a []T, lda int, b []T, ldb int, out []T) {
		f(k, unsafe.Pointer(unsafe.SliceData(a)), lda, unsafe.Pointer(unsafe.SliceData(b)), ldb, unsafe.Pointer(unsafe.SliceData(out)))
	}}
}
