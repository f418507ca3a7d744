package mathfn

import "github.com/gocaffe/gocaffe/settings"

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
// slower of the two. The arm64 NEON kernels have never been timed against
// OpenBLAS on arm64 hardware (only run, for correctness, under qemu), so
// there the build keeps OpenBLAS, whose kernels are tuned per core, until
// a measurement says otherwise. settings.GEMMOpenBLAS (GOCAFFE_GEMM=openblas)
// restores OpenBLAS for every product; settings.GEMMOwn asks for ours
// everywhere (the plain Go kernel where the CPU has no assembly ones).
//
// The choice comes with each call: CPU.GEMM, which a context's host view
// takes from the context's settings (device.Host). The package functions
// Gemm and GemmSerial take settings.GEMMAuto.

// ownSgemm and ownDgemm are settings.GEMMAuto's choice on this CPU: they
// depend on nothing but the CPU and the build (tests set them to try each
// kernel).
var (
	ownSgemm = chooseOwnGemm(settings.GEMMAuto, sgemmKernels[0].name)
	ownDgemm = chooseOwnGemm(settings.GEMMAuto, dgemmKernels[0].name)
)

// LinkedBLAS reports whether this build links a BLAS that can multiply
// matrices (the openblas tag): without one, settings.GEMMOpenBLAS is
// ignored and the own kernels multiply everything.
const LinkedBLAS = linkedGemm

// chooseOwnGemm reports whether products run on the own kernels, given
// the choice and the name of the best own kernel on this CPU ("Go" for
// the plain Go one). A choice with no word is GEMMAuto's.
func chooseOwnGemm(choice settings.GEMM, best string) bool {
	switch {
	case !linkedGemm || choice == settings.GEMMOwn:
		return true
	case choice == settings.GEMMOpenBLAS:
		return false
	}
	// The kernels measured ahead of OpenBLAS (see above).
	return best == "AVX-512" || best == "AVX2"
}

// ownGemmFor reports whether products of T run on the own kernels under
// choice.
func ownGemmFor[T Float](choice settings.GEMM) bool {
	if choice == settings.GEMMOwn || choice == settings.GEMMOpenBLAS {
		return chooseOwnGemm(choice, "")
	}
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
