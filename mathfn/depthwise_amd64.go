//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2 kernels of depthwise_amd64.s. AVX-512 CPUs run them too: an
// AVX-512 form could not be tested on the machine they were written on (an
// AMD EPYC with AVX2 only), and these are bound by loads, not by the
// vector width.

// taps9AVX2 computes n (a multiple of 8) outputs of Taps9: ptrs holds the
// nine tap addresses, w the nine weights; relu is 0 or 1.
//
//go:noescape
func taps9AVX2(out unsafe.Pointer, ptrs *[9]unsafe.Pointer, w *[9]float32, n int, bias float32, relu int)

// dots9AVX2 writes the nine taps' dot products with dy over n (a multiple
// of 8) elements as nine vectors of 8 partial sums into lanes.
//
//go:noescape
func dots9AVX2(dy unsafe.Pointer, ptrs *[9]unsafe.Pointer, n int, lanes *[72]float32)

// taps9S2AVX2 computes rows rows of Taps9S2 (strides in bytes: outStride
// between output rows, step between their first input rows, wp between
// a filter's rows); relu is 0 or 1.
//
//go:noescape
func taps9S2AVX2(out, p unsafe.Pointer, w *[9]float32, rows, n, outStride, step, wp int, bias float32, relu int)

var depthwiseAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// taps9Prefix computes Taps9 with the AVX2 kernel, over all n outputs
// where n is 8 or more, and returns how many it computed (0 for float64,
// without AVX2 or for fewer than 8).
func taps9Prefix[T Float](out, p []T, off *[9]int, w *[9]T, n int, bias T, relu bool) int {
	if !depthwiseAVX2 || unsafe.Sizeof(out[0]) != 4 {
		return 0
	}
	k := n / 8 * 8
	if k == 0 {
		return 0
	}
	var ptrs [9]unsafe.Pointer
	for t, o := range off {
		ptrs[t] = unsafe.Pointer(&p[o])
	}
	r := 0
	if relu {
		r = 1
	}
	taps9AVX2(unsafe.Pointer(&out[0]), &ptrs, (*[9]float32)(unsafe.Pointer(w)), k, float32(bias), r)
	if k == n {
		return k
	}
	// The rest as the last 8 outputs, overlapping the ones before (each
	// lane's sum is the same wherever the vector starts): no outputs one
	// by one (a 14-wide row had 6 of them).
	for t, o := range off {
		ptrs[t] = unsafe.Pointer(&p[o+n-8])
	}
	taps9AVX2(unsafe.Pointer(&out[n-8]), &ptrs, (*[9]float32)(unsafe.Pointer(w)), 8, float32(bias), r)
	return n
}

// dots9Prefix adds Dots9 over the first multiple of 8 elements to acc
// and returns how many (0 for float64 or without AVX2).
func dots9Prefix[T Float](acc *[9]T, dy, p []T, off *[9]int, n int) int {
	if !depthwiseAVX2 || unsafe.Sizeof(dy[0]) != 4 {
		return 0
	}
	k := n / 8 * 8
	if k == 0 {
		return 0
	}
	var ptrs [9]unsafe.Pointer
	for t, o := range off {
		ptrs[t] = unsafe.Pointer(&p[o])
	}
	var lanes [72]float32
	dots9AVX2(unsafe.Pointer(&dy[0]), &ptrs, k, &lanes)
	for t := range 9 {
		var s float32
		for _, v := range lanes[t*8 : t*8+8] {
			s += v
		}
		acc[t] += T(s)
	}
	return k
}

// taps9S2Prefix computes the first rows of Taps9S2 with the AVX2 kernel,
// as many as have the 16 elements past their last tap in p that its
// vectors read, and returns how many (0 for float64 or without AVX2).
func taps9S2Prefix[T Float](out []T, outStride int, p []T, step, wp int, w *[9]T, rows, n int, bias T, relu bool) int {
	if !depthwiseAVX2 || unsafe.Sizeof(out[0]) != 4 {
		return 0
	}
	// Row y's vectors read p up to y*step + 2*wp + max(2n+2, 18).
	k := rows
	if reach := 2*wp + max(2*n+2, 18); (k-1)*step+reach > len(p) {
		if reach > len(p) {
			return 0
		}
		k = (len(p)-reach)/step + 1
	}
	r := 0
	if relu {
		r = 1
	}
	taps9S2AVX2(unsafe.Pointer(&out[0]), unsafe.Pointer(&p[0]), (*[9]float32)(unsafe.Pointer(w)), k, n, 4*outStride, 4*step, 4*wp, float32(bias), r)
	return k
}
