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

//go:noescape
func slideMaxS2AVX512(dst, src unsafe.Pointer, n, k int)

// maxPoolVector says whether MaxPoolValues's maxima run eight float32
// values at a time; maxPoolAVX512 whether a stride of 2 takes its windows
// sixteen at a time (slideMaxS2Vector). Sixteen at a time, colMax and
// slideMax ran slower on the AVX-512 EPYC (Zen 4) than eight: a 3x3
// stride-1 pool of a 28x28 plane 0.55-0.61 -> 0.71-0.82 us, each
// misaligned 64-byte load crossing a cache line.
var (
	maxPoolVector = cpu.X86.HasAVX2
	maxPoolAVX512 = cpu.X86.HasAVX512F
)

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

// slideMaxS2Vector sets dst[i] to the largest of src[2i : 2i+k] with the
// AVX-512 kernel, reporting whether it ran (not for float64 or without
// AVX-512). src holds no NaN and at least slideMaxS2Room(len(dst), k)
// values: the kernel reads past the last window into lanes it drops.
func slideMaxS2Vector[T Float](dst, src []T, k int) bool {
	if !maxPoolAVX512 || unsafe.Sizeof(dst[0]) != 4 || len(dst) == 0 {
		return false
	}
	_ = src[slideMaxS2Room(len(dst), k)-1]
	slideMaxS2AVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), len(dst), k)
	return true
}
