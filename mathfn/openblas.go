//go:build openblas

package mathfn

import (
	// Importing the package installs OpenBLAS as gonum's BLAS.
	_ "github.com/gocaffe/gocaffe/mathfn/internal/openblas"
	"github.com/gocaffe/gocaffe/settings"
)

// linkedGemm: this build links a BLAS that can multiply matrices
// (gemm_choice.go decides which products it gets).
const linkedGemm = true

// BLASName names the BLAS implementations this build uses: OpenBLAS, and
// for GEMM what settings.GEMMAuto chooses (gemm_choice.go).
var BLASName = BLASNameWith(settings.GEMMAuto)

// BLASNameWith is BLASName under a GEMM choice.
func BLASNameWith(choice settings.GEMM) string {
	return "OpenBLAS (gonum.org/v1/netlib); float32 GEMM: " +
		gemmName(ownGemmFor[float32](choice), sgemmKernels[0].name, "OpenBLAS") + "; float64 GEMM: " +
		gemmName(ownGemmFor[float64](choice), dgemmKernels[0].name, "OpenBLAS")
}
