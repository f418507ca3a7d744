// Package rows copies and sums strided rows of floats, in AVX-512
// assembly where the CPU has it (NEON on arm64): mathfn's im2col and col2im move all the
// rows of a kernel offset with one call, where a call per row (copy's
// memmove) cost more than the few elements it moved (LeNet's conv2: rows
// of 8). A package of its own, without cgo, so that the openblas build
// of mathfn (a cgo package, which cannot hold assembly) has it too.
package rows

// Float is the element type of the rows.
type Float interface{ ~float32 | ~float64 }

// copyGo is Copy in Go.
func copyGo[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	for r := range rows {
		copy(dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+n])
	}
}

// addGo is Add in Go.
func addGo[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	for r := range rows {
		d, s := dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+n]
		for i, v := range s {
			d[i] += v
		}
	}
}

// Fit reports whether rows rows of n elements, stride apart, fit in a
// slice of length l (the assembly kernels check nothing).
func Fit(l, n, rows, stride int) bool {
	return n >= 0 && rows >= 0 && (rows == 0 || n == 0 || (rows-1)*stride+n <= l)
}

// Copy2 copies rows rows of n elements taken every other element from
// src: dst[r*dstStride + i] = src[r*srcStride + 2*i] (the columns of a
// stride-2 convolution's im2col). The caller has checked the bounds: each
// source row's last element read is its 2*(n-1)-th.
func Copy2[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	if n <= 0 || rows <= 0 || copy2Vector(dst, src, n, rows, dstStride, srcStride) {
		return
	}
	copy2Go(dst, src, n, rows, dstStride, srcStride)
}

// copy2Go is Copy2 in Go.
func copy2Go[T Float](dst, src []T, n, rows, dstStride, srcStride int) {
	for r := range rows {
		d, s := dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+2*n-1]
		for i := range d {
			d[i] = s[2*i]
		}
	}
}

// CopyStrided copies rows rows of n elements taken every step-th element
// from src: dst[r*dstStride + i] = src[r*srcStride + step*i] (the columns
// of a convolution of stride step). The caller has checked the bounds:
// each source row's last element read is its step*(n-1)-th.
func CopyStrided[T Float](dst, src []T, n, rows, dstStride, srcStride, step int) {
	if n <= 0 || rows <= 0 {
		return
	}
	if step == 2 {
		Copy2(dst, src, n, rows, dstStride, srcStride)
		return
	}
	if copyStridedVector(dst, src, n, rows, dstStride, srcStride, step) {
		return
	}
	copyStridedGo(dst, src, n, rows, dstStride, srcStride, step)
}

// copyStridedGo is CopyStrided in Go.
func copyStridedGo[T Float](dst, src []T, n, rows, dstStride, srcStride, step int) {
	for r := range rows {
		d, s := dst[r*dstStride:r*dstStride+n], src[r*srcStride:r*srcStride+step*(n-1)+1]
		for i := range d {
			d[i] = s[step*i]
		}
	}
}

// CopyOffsets copies len(offs) rows of n elements, row r from src at
// offs[r]: dst[r*dstStride + i] = src[offs[r] + i] (a convolution's
// panels, whose source rows are the taps' places in a padded image). The
// caller has checked the bounds: every offs[r]+n is at most len(src), and
// (len(offs)-1)*dstStride+n at most len(dst).
func CopyOffsets[T Float](dst, src []T, n, dstStride int, offs []int32) {
	if n <= 0 || len(offs) == 0 || copyOffsetsVector(dst, src, n, dstStride, offs) {
		return
	}
	for r, off := range offs {
		copy(dst[r*dstStride:r*dstStride+n], src[off:int(off)+n])
	}
}
