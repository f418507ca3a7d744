package data

import "math"

// Bilinear resizing of 8-bit planes as OpenCV's cv::resize with
// INTER_LINEAR, which Caffe's ImageData layer and convert_imageset use:
// destination pixel d samples the source at (d + 0.5) * src/dst - 0.5,
// clamped to the edge pixels, with weights in 11-bit fixed point and the
// result rounded. Like OpenCV (and unlike an antialiasing resampler) it
// reads only the two nearest source pixels per axis when shrinking.
// Results can differ from OpenCV's vectorised code by one grey level.

const (
	resizeCoefBits  = 11
	resizeCoefScale = 1 << resizeCoefBits
)

// axisTaps are, per destination index, the first source index and the
// fixed-point weight of that index (the next one gets the rest).
type axisTaps struct {
	src []int
	w0  []int32
}

// plan fills the taps for resizing n source pixels to m.
func (a *axisTaps) plan(n, m int) {
	a.src, a.w0 = resizeSlice(a.src, m), resizeSlice(a.w0, m)
	scale := float64(n) / float64(m)
	for d := range m {
		f := (float64(d)+0.5)*scale - 0.5
		s := int(math.Floor(f))
		frac := f - float64(s)
		if s < 0 {
			s, frac = 0, 0
		}
		if s >= n-1 {
			s, frac = n-1, 0
		}
		a.src[d] = s
		a.w0[d] = int32((1-frac)*resizeCoefScale + 0.5)
	}
}

func resizeSlice[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// resizer keeps its tables and row buffers between calls.
type resizer struct {
	x, y       axisTaps
	row0, row1 []int32
}

// resize resizes c planes of h x w bytes in src to oh x ow, into dst
// (reused when large enough), and returns the resized planes.
func (r *resizer) resize(src []byte, c, h, w int, dst []byte, oh, ow int) []byte {
	dst = resizeSlice(dst, c*oh*ow)
	r.x.plan(w, ow)
	r.y.plan(h, oh)
	r.row0, r.row1 = resizeSlice(r.row0, ow), resizeSlice(r.row1, ow)
	for k := range c {
		r.resizePlane(src[k*h*w:(k+1)*h*w], w, dst[k*oh*ow:(k+1)*oh*ow], ow)
	}
	return dst
}

// resizePlane interpolates each destination row from two horizontally
// interpolated source rows (OpenCV's two-pass scheme).
func (r *resizer) resizePlane(src []byte, w int, dst []byte, ow int) {
	const round = 1 << (2*resizeCoefBits - 1)
	for d := range r.y.src {
		s := r.y.src[d]
		s1 := min(s+1, len(src)/w-1)
		r.hpass(src[s*w:(s+1)*w], r.row0)
		r.hpass(src[s1*w:(s1+1)*w], r.row1)
		b0 := r.y.w0[d]
		b1 := resizeCoefScale - b0
		out := dst[d*ow : (d+1)*ow]
		for x := range out {
			out[x] = byte((b0*r.row0[x] + b1*r.row1[x] + round) >> (2 * resizeCoefBits))
		}
	}
}

// hpass interpolates one source row to the destination width, scaled by
// 2^11.
func (r *resizer) hpass(row []byte, out []int32) {
	last := len(row) - 1
	for x, s := range r.x.src {
		a0 := r.x.w0[x]
		out[x] = a0*int32(row[s]) + (resizeCoefScale-a0)*int32(row[min(s+1, last)])
	}
}
