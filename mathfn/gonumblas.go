//go:build !openblas

package mathfn

// BLASName names the BLAS implementation this build uses.
const BLASName = "gonum (pure Go)"
