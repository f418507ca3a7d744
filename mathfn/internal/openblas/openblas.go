//go:build openblas

// Package openblas links OpenBLAS into the openblas build and installs it
// as gonum's blas32 and blas64 implementation (through
// gonum.org/v1/netlib, which calls the cblas_* symbols OpenBLAS provides),
// on one thread: gocaffe spreads large products and independent images
// over goroutines itself, and OpenBLAS threads would fight them for the
// cores. It is a package of its own because a package that uses cgo
// cannot hold Go assembly, and mathfn's GEMM kernels are Go assembly.
package openblas

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
	C.openblas_set_num_threads(1)
}
