//go:build amd64 && !purego

package mathfn

import "unsafe"

//go:noescape
func convDirect12AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half int)

//go:noescape
func convDirect8AVX512(k int, a unsafe.Pointer, taps *int32, x0, x1, c unsafe.Pointer, ldc, acc, half int)

// hasConvDirect says whether GemmConvDirect has its kernels: AVX-512,
// whose GEMM kernel set packs A in panels of 12 rows (convDirectMR).
var hasConvDirect = hasConvTapsDot && kernelOf[float32]().mr == convDirectMR

// convDirectKernel runs the kernel of 12 rows (rows > 8) or of 8 on kc
// steps of panel a (convdirect_amd64.s), ldc in elements.
func convDirectKernel(rows, kc int, a []float32, taps []int32, x0, x1, c []float32, ldc int, acc, half bool) {
	f := convDirect12AVX512
	if rows <= 8 {
		f = convDirect8AVX512
	}
	f(kc, unsafe.Pointer(&a[0]), &taps[0], unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&c[0]), 4*ldc, btoi(acc), btoi(half))
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
