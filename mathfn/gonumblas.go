//go:build !openblas

package mathfn

import "github.com/gocaffe/gocaffe/settings"

// BLASName names the BLAS implementation this build uses for GEMM; the
// other BLAS routines are gonum's pure Go.
var BLASName = BLASNameWith(settings.GEMMAuto)

// BLASNameWith is BLASName under a GEMM choice: in this build, which links
// no BLAS, the same for every choice.
func BLASNameWith(settings.GEMM) string {
	return gemmName(true, sgemmKernels[0].name, "") + ", gonum (pure Go)"
}

// linkedGemm: this build links no BLAS; gemm.go's kernels multiply all
// matrices.
const linkedGemm = false
