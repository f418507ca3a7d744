//go:build cuda

package cuda

/*
#cgo noescape gc_cublas_create
#cgo noescape gc_sdot
#cgo noescape gc_ddot
#cgo noescape gc_sasum
#cgo noescape gc_dasum
#cgo nocallback gc_sgemm
#cgo nocallback gc_dgemm
#cgo nocallback gc_sgemm_strided
#cgo nocallback gc_dgemm_strided
#include "gocaffe_cuda.h"
*/
import "C"

import "fmt"

// Blas is a device's cuBLAS handle, bound to its compute stream. cuBLAS is
// column-major; these are thin wrappers with cuBLAS's own conventions (the
// row-major Caffe-style calls are in package mathfn). Scalars are passed
// from the host; Dot and Asum return their result to the host, so they wait
// for the stream. Like the stream it is bound to, a Blas is for one
// goroutine at a time.
type Blas struct {
	dev *Device
	h   C.cublasHandle_t
	// Results of dot and asum land here rather than in a local: the address
	// of a local passed to C escapes, costing an allocation per call.
	resF C.float
	resD C.double
}

// blasError turns a wrapper's result (see gocaffe_cuda.h) into an *Error.
func blasError(call string, s C.int) error {
	switch {
	case s == 0:
		return nil
	case s < 0:
		return driverError(call, C.CUresult(-s))
	}
	return &Error{Lib: "cuBLAS", Call: call, Code: int(s),
		Name: C.GoString(C.gc_cublas_status_name(s)), Desc: C.GoString(C.gc_cublas_status_string(s))}
}

// Blas returns the device's cuBLAS handle, creating it on first use. TF32
// tensor-core math is off until SetTF32 turns it on.
func (d *Device) Blas() (*Blas, error) {
	d.blasOnce.Do(func() {
		b := &Blas{dev: d}
		if err := blasError(fmt.Sprintf("cublasCreate(device %d)", d.ordinal), C.gc_cublas_create(d.ctx, &b.h, d.stream.s)); err != nil {
			d.blasErr = err
			return
		}
		d.blas = b
	})
	return d.blas, d.blasErr
}

// SetTF32 lets cuBLAS use TF32 tensor cores for float32 products (about 8x
// faster on Hopper, with a 10-bit mantissa for the inputs) or forbids it,
// the default, which gives strict FP32 like the CPU.
func (b *Blas) SetTF32(on bool) error {
	tf32 := C.int(0)
	if on {
		tf32 = 1
	}
	if s := C.gc_cublas_set_math_mode(b.dev.ctx, b.h, tf32); s != 0 {
		return blasError("cublasSetMathMode", s)
	}
	return nil
}

func opInt(o Op) C.int {
	if o == Trans {
		return 1
	}
	return 0
}

func dp(p DevicePtr) C.CUdeviceptr { return C.CUdeviceptr(p) }

// Sgemm computes C = alpha*op(A)*op(B) + beta*C, column-major.
func (b *Blas) Sgemm(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, lda int, bm DevicePtr, ldb int, beta float32, c DevicePtr, ldc int) error {
	if s := C.gc_sgemm(b.dev.ctx, b.h, opInt(ta), opInt(tb),
		C.int(m), C.int(n), C.int(k), C.float(alpha), dp(a), C.int(lda), dp(bm), C.int(ldb), C.float(beta), dp(c), C.int(ldc)); s != 0 {
		return blasError(fmt.Sprintf("cublasSgemm(m=%d n=%d k=%d)", m, n, k), s)
	}
	return nil
}

// GemmEx computes C = alpha*op(A)*op(B) + beta*C, column-major, with A,
// B and C each in its own element type (BlasFloat, BlasHalf,
// BlasBFloat16) and the products summed in FP32 (CUBLAS_COMPUTE_32F):
// the GEMMs of layers that store activations in 16 bits, whose tensor-core
// kernels cuBLAS picks.
func (b *Blas) GemmEx(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, at BlasType, lda int, bm DevicePtr, bt BlasType, ldb int, beta float32, c DevicePtr, ct BlasType, ldc int) error {
	if s := C.gc_gemm_ex(b.dev.ctx, b.h, opInt(ta), opInt(tb), C.int(m), C.int(n), C.int(k), C.float(alpha),
		dp(a), C.int(at), C.int(lda), dp(bm), C.int(bt), C.int(ldb), C.float(beta), dp(c), C.int(ct), C.int(ldc)); s != 0 {
		return blasError(fmt.Sprintf("cublasGemmEx(m=%d n=%d k=%d)", m, n, k), s)
	}
	return nil
}

// GemmStridedBatchedEx is SgemmStridedBatched with A, B and C each in its
// own element type and the products summed in FP32, as GemmEx.
func (b *Blas) GemmStridedBatchedEx(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, at BlasType, lda, strideA int, bm DevicePtr, bt BlasType, ldb, strideB int, beta float32, c DevicePtr, ct BlasType, ldc, strideC, batch int) error {
	if s := C.gc_gemm_strided_ex(b.dev.ctx, b.h, opInt(ta), opInt(tb), C.int(m), C.int(n), C.int(k), C.float(alpha),
		dp(a), C.int(at), C.int(lda), C.longlong(strideA), dp(bm), C.int(bt), C.int(ldb), C.longlong(strideB), C.float(beta),
		dp(c), C.int(ct), C.int(ldc), C.longlong(strideC), C.int(batch)); s != 0 {
		return blasError(fmt.Sprintf("cublasGemmStridedBatchedEx(m=%d n=%d k=%d batch=%d)", m, n, k, batch), s)
	}
	return nil
}

// Dgemm is Sgemm for float64.
func (b *Blas) Dgemm(ta, tb Op, m, n, k int, alpha float64, a DevicePtr, lda int, bm DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error {
	if s := C.gc_dgemm(b.dev.ctx, b.h, opInt(ta), opInt(tb),
		C.int(m), C.int(n), C.int(k), C.double(alpha), dp(a), C.int(lda), dp(bm), C.int(ldb), C.double(beta), dp(c), C.int(ldc)); s != 0 {
		return blasError(fmt.Sprintf("cublasDgemm(m=%d n=%d k=%d)", m, n, k), s)
	}
	return nil
}

// SgemmStridedBatched computes batch products C_i = alpha*op(A_i)*op(B_i) +
// beta*C_i, column-major, where X_i starts stride elements after X_{i-1}
// (a stride of 0 reuses one matrix for every product).
func (b *Blas) SgemmStridedBatched(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, lda, strideA int, bm DevicePtr, ldb, strideB int, beta float32, c DevicePtr, ldc, strideC, batch int) error {
	if s := C.gc_sgemm_strided(b.dev.ctx, b.h, opInt(ta), opInt(tb), C.int(m), C.int(n), C.int(k), C.float(alpha),
		dp(a), C.int(lda), C.longlong(strideA), dp(bm), C.int(ldb), C.longlong(strideB), C.float(beta),
		dp(c), C.int(ldc), C.longlong(strideC), C.int(batch)); s != 0 {
		return blasError(fmt.Sprintf("cublasSgemmStridedBatched(m=%d n=%d k=%d batch=%d)", m, n, k, batch), s)
	}
	return nil
}

// DgemmStridedBatched is SgemmStridedBatched for float64.
func (b *Blas) DgemmStridedBatched(ta, tb Op, m, n, k int, alpha float64, a DevicePtr, lda, strideA int, bm DevicePtr, ldb, strideB int, beta float64, c DevicePtr, ldc, strideC, batch int) error {
	if s := C.gc_dgemm_strided(b.dev.ctx, b.h, opInt(ta), opInt(tb), C.int(m), C.int(n), C.int(k), C.double(alpha),
		dp(a), C.int(lda), C.longlong(strideA), dp(bm), C.int(ldb), C.longlong(strideB), C.double(beta),
		dp(c), C.int(ldc), C.longlong(strideC), C.int(batch)); s != 0 {
		return blasError(fmt.Sprintf("cublasDgemmStridedBatched(m=%d n=%d k=%d batch=%d)", m, n, k, batch), s)
	}
	return nil
}

// Sgemv computes y = alpha*op(A)*x + beta*y, A m x n column-major.
func (b *Blas) Sgemv(t Op, m, n int, alpha float32, a DevicePtr, lda int, x DevicePtr, incx int, beta float32, y DevicePtr, incy int) error {
	if s := C.gc_sgemv(b.dev.ctx, b.h, opInt(t), C.int(m), C.int(n),
		C.float(alpha), dp(a), C.int(lda), dp(x), C.int(incx), C.float(beta), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasSgemv(m=%d n=%d)", m, n), s)
	}
	return nil
}

// Dgemv is Sgemv for float64.
func (b *Blas) Dgemv(t Op, m, n int, alpha float64, a DevicePtr, lda int, x DevicePtr, incx int, beta float64, y DevicePtr, incy int) error {
	if s := C.gc_dgemv(b.dev.ctx, b.h, opInt(t), C.int(m), C.int(n),
		C.double(alpha), dp(a), C.int(lda), dp(x), C.int(incx), C.double(beta), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasDgemv(m=%d n=%d)", m, n), s)
	}
	return nil
}

// Saxpy computes y += alpha*x.
func (b *Blas) Saxpy(n int, alpha float32, x DevicePtr, incx int, y DevicePtr, incy int) error {
	if s := C.gc_saxpy(b.dev.ctx, b.h, C.int(n), C.float(alpha), dp(x), C.int(incx), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasSaxpy(n=%d)", n), s)
	}
	return nil
}

// Daxpy is Saxpy for float64.
func (b *Blas) Daxpy(n int, alpha float64, x DevicePtr, incx int, y DevicePtr, incy int) error {
	if s := C.gc_daxpy(b.dev.ctx, b.h, C.int(n), C.double(alpha), dp(x), C.int(incx), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasDaxpy(n=%d)", n), s)
	}
	return nil
}

// Sscal computes x *= alpha.
func (b *Blas) Sscal(n int, alpha float32, x DevicePtr, incx int) error {
	if s := C.gc_sscal(b.dev.ctx, b.h, C.int(n), C.float(alpha), dp(x), C.int(incx)); s != 0 {
		return blasError(fmt.Sprintf("cublasSscal(n=%d)", n), s)
	}
	return nil
}

// Dscal is Sscal for float64.
func (b *Blas) Dscal(n int, alpha float64, x DevicePtr, incx int) error {
	if s := C.gc_dscal(b.dev.ctx, b.h, C.int(n), C.double(alpha), dp(x), C.int(incx)); s != 0 {
		return blasError(fmt.Sprintf("cublasDscal(n=%d)", n), s)
	}
	return nil
}

// Sdot returns x . y.
func (b *Blas) Sdot(n int, x DevicePtr, incx int, y DevicePtr, incy int) (float32, error) {
	if s := C.gc_sdot(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), dp(y), C.int(incy), &b.resF); s != 0 {
		return 0, blasError(fmt.Sprintf("cublasSdot(n=%d)", n), s)
	}
	return float32(b.resF), nil
}

// Ddot is Sdot for float64.
func (b *Blas) Ddot(n int, x DevicePtr, incx int, y DevicePtr, incy int) (float64, error) {
	if s := C.gc_ddot(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), dp(y), C.int(incy), &b.resD); s != 0 {
		return 0, blasError(fmt.Sprintf("cublasDdot(n=%d)", n), s)
	}
	return float64(b.resD), nil
}

// Sasum returns the sum of |x|.
func (b *Blas) Sasum(n int, x DevicePtr, incx int) (float32, error) {
	if s := C.gc_sasum(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), &b.resF); s != 0 {
		return 0, blasError(fmt.Sprintf("cublasSasum(n=%d)", n), s)
	}
	return float32(b.resF), nil
}

// Dasum is Sasum for float64.
func (b *Blas) Dasum(n int, x DevicePtr, incx int) (float64, error) {
	if s := C.gc_dasum(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), &b.resD); s != 0 {
		return 0, blasError(fmt.Sprintf("cublasDasum(n=%d)", n), s)
	}
	return float64(b.resD), nil
}

// Scopy copies x to y.
func (b *Blas) Scopy(n int, x DevicePtr, incx int, y DevicePtr, incy int) error {
	if s := C.gc_scopy(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasScopy(n=%d)", n), s)
	}
	return nil
}

// Dcopy is Scopy for float64.
func (b *Blas) Dcopy(n int, x DevicePtr, incx int, y DevicePtr, incy int) error {
	if s := C.gc_dcopy(b.dev.ctx, b.h, C.int(n), dp(x), C.int(incx), dp(y), C.int(incy)); s != 0 {
		return blasError(fmt.Sprintf("cublasDcopy(n=%d)", n), s)
	}
	return nil
}
