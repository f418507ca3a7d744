//go:build openblas

package mathfn

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// The cgo line above links OpenBLAS, which provides the cblas_* symbols that
// gonum.org/v1/netlib calls.
// OpenBLAS runs on one thread: gocaffe spreads large products and
// independent images over goroutines itself, and OpenBLAS threads would
// fight them for the cores.
func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
	C.openblas_set_num_threads(1)
}

// BLASName names the BLAS implementation this build uses.
const BLASName = "OpenBLAS (gonum.org/v1/netlib)"

// ownGemm: this build multiplies matrices with OpenBLAS.
const ownGemm = false
