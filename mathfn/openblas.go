//go:build openblas

package mathfn

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// The cgo line above links OpenBLAS, which provides the cblas_* symbols that
// gonum.org/v1/netlib calls.
func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
}

// BLASName names the BLAS implementation this build uses.
const BLASName = "OpenBLAS (gonum.org/v1/netlib)"

// ownGemm: this build multiplies matrices with OpenBLAS.
const ownGemm = false
