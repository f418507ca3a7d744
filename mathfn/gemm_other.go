//go:build (!amd64 && !arm64) || purego

package mathfn

// archSgemmKernels returns no kernels: this build has no assembly ones
// (other CPUs, the purego tag, or OpenBLAS doing the products).
func archSgemmKernels() []microKernel[float32] { return nil }

// archDgemmKernels returns no kernels, as archSgemmKernels.
func archDgemmKernels() []microKernel[float64] { return nil }
