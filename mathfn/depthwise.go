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
