//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func addF32AVX512(a, b, y unsafe.Pointer, n int)

//go:noescape
func subF32AVX512(a, b, y unsafe.Pointer, n int)

//go:noescape
func mulF32AVX512(a, b, y unsafe.Pointer, n int)

//go:noescape
func divF32AVX512(a, b, y unsafe.Pointer, n int)

//go:noescape
func addF32AVX2(a, b, y unsafe.Pointer, n int)

//go:noescape
func subF32AVX2(a, b, y unsafe.Pointer, n int)

//go:noescape
func mulF32AVX2(a, b, y unsafe.Pointer, n int)

//go:noescape
func divF32AVX2(a, b, y unsafe.Pointer, n int)

// binaryVector says whether Add, Sub, Mul and Div, MulScalar,
// MulAddScalar and AddScaled run on vector kernels, vectorLanes float32
// values at a time: sixteen with AVX-512, else eight with AVX2 (on a
// 2-vCPU AVX2 machine the Go loops of ResNet-50's Eltwise sums took 5%
// of a forward pass).
var (
	binaryVector = cpu.X86.HasAVX512F || cpu.X86.HasAVX2
	vectorLanes  = 8
)

// The kernels by operation.
var binaryKernels = [...]func(a, b, y unsafe.Pointer, n int){opAdd: addF32AVX2, opSub: subF32AVX2, opMul: mulF32AVX2, opDiv: divF32AVX2}

func init() {
	if cpu.X86.HasAVX512F {
		vectorLanes = 16
		binaryKernels = [...]func(a, b, y unsafe.Pointer, n int){opAdd: addF32AVX512, opSub: subF32AVX512, opMul: mulF32AVX512, opDiv: divF32AVX512}
		scalarKernels = [...]func(a, y unsafe.Pointer, n int, alpha, beta float32){
			opMulScalar: mulScalarF32AVX512, opMulAddScalar: mulAddScalarF32AVX512, opAddScaled: addScaledF32AVX512}
	}
}

// binaryPrefix computes op over the whole vectors of the first n values
// and returns how many it did (0 for float64 or without vector kernels).
func binaryPrefix[T Float](op binaryOp, n int, a, b, y []T) int {
	if !binaryVector || unsafe.Sizeof(a[0]) != 4 {
		return 0
	}
	k := n / vectorLanes * vectorLanes
	if k > 0 {
		binaryKernels[op](unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&y[0]), k)
	}
	return k
}

//go:noescape
func mulScalarF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func mulAddScalarF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func addScaledF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func mulScalarF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func mulAddScalarF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func addScaledF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)

// The kernels of an array and scalars, by operation (AVX-512's replace
// them in init where the CPU has it).
var scalarKernels = [...]func(a, y unsafe.Pointer, n int, alpha, beta float32){
	opMulScalar: mulScalarF32AVX2, opMulAddScalar: mulAddScalarF32AVX2, opAddScaled: addScaledF32AVX2}

// scalarPrefix computes op over the whole vectors of the first n values
// and returns how many it did (0 for float64 or without vector kernels).
func scalarPrefix[T Float](op scalarOp, n int, a []T, alpha, beta T, y []T) int {
	if !binaryVector || unsafe.Sizeof(a[0]) != 4 {
		return 0
	}
	k := n / vectorLanes * vectorLanes
	if k > 0 {
		scalarKernels[op](unsafe.Pointer(&a[0]), unsafe.Pointer(&y[0]), k, *(*float32)(unsafe.Pointer(&alpha)), *(*float32)(unsafe.Pointer(&beta)))
	}
	return k
}
