package mathfn

import "fmt"

// The row kernels of a direct 3x3 depthwise convolution (the convolution
// layers' host path for one filter per channel): each output row is a
// weighted sum of nine rows of a padded input plane, so no im2col and no
// GEMM of one row per channel. Where each tap reads, and what it weighs,
// the caller works out (stride, padding, the backward pass's flipped
// filter); these do the sums, in AVX2 where the CPU has it (float32) and
// in Go elsewhere.

// Taps9 computes out[x] = bias + sum over t of w[t]*p[off[t]+x], for x
// in [0, n), then a ReLU (max(v, 0)) where relu is set. The sums are
// formed in three partial sums of three taps each, added in the order
// (bias, taps 0,3,6) + (1,4,7) + (2,5,8) on both paths (the vector one
// with fused multiply-adds, so the two differ in rounding).
// It panics if a tap reads outside p or n exceeds out: a programmer's
// error in the caller's geometry.
func Taps9[T Float](out, p []T, off *[9]int, w *[9]T, n int, bias T, relu bool) {
	if n <= 0 {
		return
	}
	checkTaps(len(out), len(p), off, n)
	done := taps9Prefix(out, p, off, w, n, bias, relu)
	taps9Go(out, p, off, w, done, n, bias, relu)
}

// Dots9 adds to acc[t] the dot product of dy[0:n] with p[off[t]:off[t]+n],
// for each of the nine taps (the filter gradient of one output row).
func Dots9[T Float](acc *[9]T, dy, p []T, off *[9]int, n int) {
	if n <= 0 {
		return
	}
	checkTaps(len(dy), len(p), off, n)
	done := dots9Prefix(acc, dy, p, off, n)
	for t := range 9 {
		var s T
		row := p[off[t]:]
		for x := done; x < n; x++ {
			s += dy[x] * row[x]
		}
		acc[t] += s
	}
}

func checkTaps(out, p int, off *[9]int, n int) {
	if n > out {
		panic(fmt.Sprintf("mathfn: depthwise row of %d into %d places", n, out))
	}
	for t, o := range off {
		if o < 0 || o+n > p {
			panic(fmt.Sprintf("mathfn: depthwise tap %d reads [%d, %d) of a plane of %d", t, o, o+n, p))
		}
	}
}

// taps9Go is Taps9 over [lo, hi).
func taps9Go[T Float](out, p []T, off *[9]int, w *[9]T, lo, hi int, bias T, relu bool) {
	for x := lo; x < hi; x++ {
		a := bias + w[0]*p[off[0]+x]
		b := w[1] * p[off[1]+x]
		c := w[2] * p[off[2]+x]
		a += w[3] * p[off[3]+x]
		b += w[4] * p[off[4]+x]
		c += w[5] * p[off[5]+x]
		a += w[6] * p[off[6]+x]
		b += w[7] * p[off[7]+x]
		c += w[8] * p[off[8]+x]
		v := a + b + c
		if relu && v < 0 {
			v = 0
		}
		out[x] = v
	}
}

// Taps9S2 computes rows rows of a 3x3 convolution at a horizontal stride
// of 2 over a padded plane p of row length wp, n outputs a row:
//
//	out[y*outStride+x] = bias + sum over ky, kx of w[3ky+kx] * p[y*step + ky*wp + 2x + kx]
//
// then a ReLU where relu is set; step is the vertical stride times wp.
// The taps read p as it is, where a kernel over contiguous rows (Taps9)
// needed each row's even and odd columns apart first: that copy, a
// scalar loop, took more time than the sums (MobileNet's stride-2
// layers ran at half the stride-1 layers' speed per input element). The
// sums are grouped as Taps9's. The vector kernel reads up to 16 elements
// past a row's last tap (into the next rows, or past the plane where p
// has room; rows without that room are summed in Go).
// It panics if a tap reads outside p or a row's outputs overlap the
// next row's or fall outside out: a programmer's error in the caller's
// geometry.
func Taps9S2[T Float](out []T, outStride int, p []T, step, wp int, w *[9]T, rows, n int, bias T, relu bool) {
	if rows <= 0 || n <= 0 {
		return
	}
	if (rows > 1 && (outStride < n || step <= 0)) || (rows-1)*outStride+n > len(out) {
		panic(fmt.Sprintf("mathfn: %d stride-2 depthwise rows of %d at a stride of %d into %d places", rows, n, outStride, len(out)))
	}
	if last := (rows-1)*step + 2*wp + 2*n + 1; wp < 2*n+1 || last > len(p) {
		panic(fmt.Sprintf("mathfn: stride-2 depthwise rows of %d (row length %d, step %d) read [0, %d) of a plane of %d", n, wp, step, last, len(p)))
	}
	done := taps9S2Prefix(out, outStride, p, step, wp, w, rows, n, bias, relu)
	for y := done; y < rows; y++ {
		o, q := out[y*outStride:y*outStride+n], p[y*step:]
		for x := range o {
			r0, r1, r2 := q[2*x:2*x+3], q[wp+2*x:wp+2*x+3], q[2*wp+2*x:2*wp+2*x+3]
			a := bias + w[0]*r0[0]
			b := w[1] * r0[1]
			c := w[2] * r0[2]
			a += w[3] * r1[0]
			b += w[4] * r1[1]
			c += w[5] * r1[2]
			a += w[6] * r2[0]
			b += w[7] * r2[1]
			c += w[8] * r2[2]
			v := a + b + c
			if relu && v < 0 {
				v = 0
			}
			o[x] = v
		}
	}
}
