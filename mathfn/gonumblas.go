//go:build !openblas

package mathfn

// BLASName names the BLAS implementation this build uses for GEMM; the
// other BLAS routines are gonum's pure Go.
var BLASName = "gocaffe's GEMM (" + sgemmKernels[0].name + " kernels), gonum (pure Go)"

// ownGemm: this build multiplies matrices with gemm.go's kernels.
const ownGemm = true
