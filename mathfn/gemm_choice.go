package mathfn

import (
	"log/slog"
	"os"
)

// Which code multiplies the matrices of each element type: gemm.go's own
// kernels, or the linked BLAS of the openblas build.
//
// The openblas build keeps OpenBLAS for everything gonum's blas32 and
// blas64 do, and for GEMM where this CPU has no assembly kernels of our
// own (other architectures, the purego tag). Where it has them it
// multiplies with them: on a 2-vCPU AVX-512 machine they ran the layer
// shapes of LeNet, CIFAR-10 and CaffeNet 1.1-2.7x as fast as
// single-thread OpenBLAS 0.3.21 in float32 (BenchmarkSgemm) and 1.2-2.2x
// in float64, and a user who links OpenBLAS for speed should not get the
// slower of the two. GOCAFFE_GEMM=openblas restores OpenBLAS for every
// product; GOCAFFE_GEMM=own asks for ours everywhere (the plain Go kernel
// where the CPU has no assembly ones).
var (
	gemmOverride = readGemmEnv()
	ownSgemm     = chooseOwnGemm(gemmOverride, sgemmKernels[0].name)
	ownDgemm     = chooseOwnGemm(gemmOverride, dgemmKernels[0].name)
)

// gemmEnv is the variable that overrides the choice.
const gemmEnv = "GOCAFFE_GEMM"

// readGemmEnv returns gemmEnv's value where this build can honour it, ""
// (choose by CPU) otherwise, with a warning: a variable that only tunes
// speed is not worth refusing to start for.
func readGemmEnv() string {
	v := os.Getenv(gemmEnv)
	switch {
	case v == "" || v == "own":
		return v
	case !linkedGemm:
		slog.Warn("mathfn: "+gemmEnv+" is ignored: this build links no BLAS for GEMM (build with -tags openblas)", "value", v)
		return ""
	case v == "openblas":
		return v
	}
	slog.Warn("mathfn: unknown "+gemmEnv+" (want openblas or own); choosing by CPU", "value", v)
	return ""
}

// chooseOwnGemm reports whether products run on the own kernels, given
// the override and the name of the best own kernel on this CPU ("Go" for
// the plain Go one).
func chooseOwnGemm(override, best string) bool {
	switch {
	case !linkedGemm || override == "own":
		return true
	case override == "openblas":
		return false
	}
	return best != "Go"
}

// ownGemmFor reports whether products of T run on the own kernels.
func ownGemmFor[T Float]() bool {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return ownDgemm
	}
	return ownSgemm
}

// gemmName names what multiplies matrices of one type: the own kernels of
// the given name, or the linked BLAS.
func gemmName(own bool, kernel, blasName string) string {
	if own {
		return "gocaffe's GEMM (" + kernel + " kernels)"
	}
	return blasName
}
