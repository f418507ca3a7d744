//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasConvTapsDot says whether convTapsDot has its kernel (AVX-512).
var hasConvTapsDot = cpu.X86.HasAVX512F

//go:noescape
func convTapsDotAVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, rows, vecs, rowSkip, imageSkip int, out unsafe.Pointer)

//go:noescape
func convTapsDot8AVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, pairs, rowStep, imageSkip int, out unsafe.Pointer)

// convTapsDot8Kernel is convTapsDot8AVX512 (see convtaps_amd64.s), lda,
// rowStep and imageSkip in elements.
func convTapsDot8Kernel(a []float32, lda int, x []float32, taps *[6]int32, images, pairs, rowStep, imageSkip int, out *[24]float32) {
	convTapsDot8AVX512(unsafe.Pointer(&a[0]), 4*lda, unsafe.Pointer(&x[0]), &taps[0], images, pairs, 4*rowStep, 4*imageSkip, unsafe.Pointer(&out[0]))
}

// convTapsDotKernel is convTapsDotAVX512 (see convtaps_amd64.s), lda and
// the skips in elements.
func convTapsDotKernel(a []float32, lda int, x []float32, taps *[6]int32, images, rows, vecs, rowSkip, imageSkip int, out *[24]float32) {
	convTapsDotAVX512(unsafe.Pointer(&a[0]), 4*lda, unsafe.Pointer(&x[0]), &taps[0], images, rows, vecs, 4*rowSkip, 4*imageSkip, unsafe.Pointer(&out[0]))
}
