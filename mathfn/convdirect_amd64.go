//go:build amd64 && !purego

package mathfn

import "unsafe"

//go:noescape
func convDirect12AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half int)

//go:noescape
func convDirect8AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half int)

//go:noescape
func convDirect12P8AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half, rowStep int)

//go:noescape
func convDirect8P8AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half, rowStep int)

// hasConvDirect says whether GemmConvDirect has its kernels: AVX-512,
// whose GEMM kernel set packs A in panels of 12 rows (convDirectMR).
var hasConvDirect = hasConvTapsDot && kernelOf[float32]().mr == convDirectMR

// convDirectKernel runs the kernel of 12 rows (rows > 8) or of 8 on kc
// steps of panel a (convdirect_amd64.s), ldc in elements; with rowStep >
// 0 the kernel for output rows of 8 positions, each vector two rows
// rowStep elements apart.
func convDirectKernel(rows, kc int, a []float32, taps []int32, x0, x1, c []float32, ldc int, acc, half bool, rowStep int) {
	pa, pt, p0, p1, pc := unsafe.Pointer(&a[0]), &taps[0], unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&c[0])
	switch {
	case rowStep > 0 && rows > 8:
		convDirect12P8AVX512(kc, pa, pt, p0, p1, pc, 4*ldc, btoi(acc), btoi(half), 4*rowStep)
	case rowStep > 0:
		convDirect8P8AVX512(kc, pa, pt, p0, p1, pc, 4*ldc, btoi(acc), btoi(half), 4*rowStep)
	case rows > 8:
		convDirect12AVX512(kc, pa, pt, p0, p1, pc, 4*ldc, btoi(acc), btoi(half))
	default:
		convDirect8AVX512(kc, pa, pt, p0, p1, pc, 4*ldc, btoi(acc), btoi(half))
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
