//go:build openblas

package mathfn

// Importing the package installs OpenBLAS as gonum's BLAS.
import _ "github.com/gocaffe/gocaffe/mathfn/internal/openblas"

// linkedGemm: this build links a BLAS that can multiply matrices
// (gemm_choice.go decides which products it gets).
const linkedGemm = true

// BLASName names the BLAS implementations this build uses: OpenBLAS, and
// for GEMM whatever gemm_choice.go chose.
var BLASName = "OpenBLAS (gonum.org/v1/netlib); float32 GEMM: " +
	gemmName(ownSgemm, sgemmKernels[0].name, "OpenBLAS") + "; float64 GEMM: " +
	gemmName(ownDgemm, dgemmKernels[0].name, "OpenBLAS")
