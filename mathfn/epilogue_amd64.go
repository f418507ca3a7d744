//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func epilogueAVX2(c unsafe.Pointer, ldc, rows, cols int, bias unsafe.Pointer, biasStep int, relu int)

// epilogueVector says whether a float32 epilogue of a row bias and a
// zero-slope ReLU runs eight values at a time. The Go loop's branch on
// the sign was mispredicted about every other value of a convolution's
// output: on a 2-vCPU AVX2 machine it took a third of MobileNet v1's
// forward pass at batch 1.
var epilogueVector = cpu.X86.HasAVX2

// zeroBias is the bias of an epilogue without one.
var zeroBias float32

// epilogueRows applies a row bias (nil: none) and, with relu, a zero-slope
// ReLU to rows [i0, i1) and columns [j0, j1) of the float32 matrix c (row
// stride ldc), and reports whether it did: false where this CPU has no
// kernel for it or T is not float32.
func epilogueRows[T Float](c []T, ldc, i0, i1, j0, j1 int, rowBias []T, relu bool) bool {
	if !epilogueVector || unsafe.Sizeof(c[0]) != 4 {
		return false
	}
	if i1 <= i0 || j1 <= j0 || rowBias == nil && !relu {
		return true // nothing to do
	}
	bias, step := unsafe.Pointer(&zeroBias), 0
	if rowBias != nil {
		_ = rowBias[i1-1]
		bias, step = unsafe.Pointer(&rowBias[i0]), 4
	}
	r := 0
	if relu {
		r = 1
	}
	_ = c[(i1-1)*ldc+j1-1] // the last element is inside c
	epilogueAVX2(unsafe.Pointer(&c[i0*ldc+j0]), ldc, i1-i0, j1-j0, bias, step, r)
	return true
}
