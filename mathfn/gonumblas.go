//go:build !openblas

package mathfn

// BLASName names the BLAS implementation this build uses for GEMM; the
// other BLAS routines are gonum's pure Go.
var BLASName = gemmName(true, sgemmKernels[0].name, "") + ", gonum (pure Go)"

// linkedGemm: this build links no BLAS; gemm.go's kernels multiply all
// matrices.
const linkedGemm = false
