//go:build arm64 && !purego

package mathfn

import "unsafe"

// The NEON kernels of elementwise_arm64.s, float32 and float64: whole
// 128-bit vectors of n values (a multiple of 4 or 2).

//go:noescape
func addF32NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func subF32NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func mulF32NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func divF32NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func addF64NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func subF64NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func mulF64NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func divF64NEON(a, b, y unsafe.Pointer, n int)

//go:noescape
func mulScalarF32NEON(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func mulAddScalarF32NEON(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func addScaledF32NEON(a, y unsafe.Pointer, n int, alpha, beta float32)

//go:noescape
func mulScalarF64NEON(a, y unsafe.Pointer, n int, alpha, beta float64)

//go:noescape
func mulAddScalarF64NEON(a, y unsafe.Pointer, n int, alpha, beta float64)

//go:noescape
func addScaledF64NEON(a, y unsafe.Pointer, n int, alpha, beta float64)

// The kernels by operation and element type.
var (
	binaryF32 = [...]func(a, b, y unsafe.Pointer, n int){opAdd: addF32NEON, opSub: subF32NEON, opMul: mulF32NEON, opDiv: divF32NEON}
	binaryF64 = [...]func(a, b, y unsafe.Pointer, n int){opAdd: addF64NEON, opSub: subF64NEON, opMul: mulF64NEON, opDiv: divF64NEON}
	scalarF32 = [...]func(a, y unsafe.Pointer, n int, alpha, beta float32){
		opMulScalar: mulScalarF32NEON, opMulAddScalar: mulAddScalarF32NEON, opAddScaled: addScaledF32NEON}
	scalarF64 = [...]func(a, y unsafe.Pointer, n int, alpha, beta float64){
		opMulScalar: mulScalarF64NEON, opMulAddScalar: mulAddScalarF64NEON, opAddScaled: addScaledF64NEON}
)

// vectorLen is the whole vectors' part of n values of T (0 without NEON).
func vectorLen[T Float](n int) int {
	if !neon {
		return 0
	}
	lanes := 16 / int(unsafe.Sizeof(T(0)))
	return n / lanes * lanes
}

// binaryPrefix computes op over the whole vectors of the first n values
// and returns how many it did.
func binaryPrefix[T Float](op binaryOp, n int, a, b, y []T) int {
	k := vectorLen[T](n)
	if k == 0 {
		return 0
	}
	pa, pb, py := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&y[0])
	if unsafe.Sizeof(a[0]) == 4 {
		binaryF32[op](pa, pb, py, k)
	} else {
		binaryF64[op](pa, pb, py, k)
	}
	return k
}

// scalarPrefix computes op over the whole vectors of the first n values
// and returns how many it did.
func scalarPrefix[T Float](op scalarOp, n int, a []T, alpha, beta T, y []T) int {
	k := vectorLen[T](n)
	if k == 0 {
		return 0
	}
	pa, py := unsafe.Pointer(&a[0]), unsafe.Pointer(&y[0])
	switch a := any(alpha).(type) {
	case float32:
		scalarF32[op](pa, py, k, a, any(beta).(float32))
	case float64:
		scalarF64[op](pa, py, k, a, any(beta).(float64))
	}
	return k
}
