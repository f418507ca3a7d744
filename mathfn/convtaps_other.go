//go:build !amd64 || purego

package mathfn

// hasConvTapsDot is false: no kernel in this build.
const hasConvTapsDot = false

// convTapsDotKernel is never called without a kernel.
func convTapsDotKernel(a []float32, lda int, x []float32, taps *[6]int32, images, rows, vecs, rowSkip, imageSkip int, out *[24]float32) {
	panic("mathfn: convTapsDotKernel without a kernel")
}

// convTapsDot8Kernel is never called without a kernel.
func convTapsDot8Kernel(a []float32, lda int, x []float32, taps *[6]int32, images, pairs, rowStep, imageSkip int, out *[24]float32) {
	panic("mathfn: convTapsDot8Kernel without a kernel")
}
