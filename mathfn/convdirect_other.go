//go:build !amd64 || purego

package mathfn

// hasConvDirect is false: no kernel in this build.
const hasConvDirect = false

// convDirectKernel is never called without a kernel.
func convDirectKernel(rows, kc int, a []float32, taps []int32, x0, x1, c []float32, ldc int, acc, half bool, rowStep int) {
	panic("mathfn: convDirectKernel without a kernel")
}
