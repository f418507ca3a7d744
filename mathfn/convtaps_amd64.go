//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasConvTapsDot says whether convTapsDot has its kernel (AVX-512).
var hasConvTapsDot = cpu.X86.HasAVX512F

//go:noescape
func convTapsDotAVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, rows, vecs, rowSkip, imageSkip int, c unsafe.Pointer, ldc, blocks, cols int)

//go:noescape
func convTapsDot8AVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, pairs, rowStep, imageSkip int, c unsafe.Pointer, ldc, blocks, cols int)

// convTapsDotKernel adds to C (rows ldc apart, from c) the first cols of
// the 6 taps' sums of blocks blocks of 4 rows of a (rows lda apart): the
// kernel of rows of whole vectors (pairs 0) or of rows of 8 positions in
// pairs, rowStep apart (convtaps_amd64.s). Lengths in elements.
func convTapsDotKernel(a []float32, lda int, x []float32, taps *[6]int32, images, rows, vecs, rowStep, pairs, imageSkip int, c []float32, ldc, blocks, cols int) {
	pa, px, pc := unsafe.Pointer(&a[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&c[0])
	if pairs > 0 {
		convTapsDot8AVX512(pa, 4*lda, px, &taps[0], images, pairs, 4*rowStep, 4*imageSkip, pc, 4*ldc, blocks, cols)
		return
	}
	convTapsDotAVX512(pa, 4*lda, px, &taps[0], images, rows, vecs, 4*(rowStep-16*vecs), 4*imageSkip, pc, 4*ldc, blocks, cols)
}
