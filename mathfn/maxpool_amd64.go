//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func colMaxAVX2(dst, x unsafe.Pointer, n, rows, ld int)

//go:noescape
func slideMaxAVX2(dst, src unsafe.Pointer, n, k int)

// maxPoolVector says whether MaxPoolValues's maxima run eight float32
// values at a time.
var maxPoolVector = cpu.X86.HasAVX2

// colMaxVector is colMax with the AVX2 kernel, reporting whether it ran
// (not for float64 or without AVX2).
func colMaxVector[T Float](dst, x []T, rows, ld int) bool {
	if !maxPoolVector || unsafe.Sizeof(dst[0]) != 4 {
		return false
	}
	_ = x[(rows-1)*ld+len(dst)-1]
	colMaxAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0]), len(dst), rows, ld)
	return true
}

// slideMaxVector is slideMax with the AVX2 kernel, reporting whether it
// ran (not for float64 or without AVX2).
func slideMaxVector[T Float](dst, src []T, k int) bool {
	if !maxPoolVector || unsafe.Sizeof(dst[0]) != 4 {
		return false
	}
	_ = src[len(dst)+k-2]
	slideMaxAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), len(dst), k)
	return true
}
