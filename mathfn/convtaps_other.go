//go:build !amd64 || purego

package mathfn

// hasConvTapsDot is false: no kernel in this build.
const hasConvTapsDot = false

// convTapsDotKernel is never called without a kernel.
func convTapsDotKernel(a []float32, lda int, x []float32, taps *[6]int32, images, rows, vecs, rowStep, pairs, imageSkip int, c []float32, ldc, blocks, cols int) {
	panic("mathfn: convTapsDotKernel without a kernel")
}
