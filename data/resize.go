package data

import (
	"fmt"
	"math"
)

// OpenCV's INTER_LINEAR works on 8-bit images in fixed point, with weights
// scaled by 2^11; Resizer does the same so that its results match the ones
// Caffe's convert_imageset and ImageData layer get from cv::resize.
const (
	resizeCoefBits  = 11
	resizeCoefScale = 1 << resizeCoefBits
)

// ResizeBilinear resizes an 8-bit image stored as a raw Datum stores it
// (channels planes of h rows of w bytes) to nh x nw, with bilinear
// interpolation as OpenCV's cv::resize with INTER_LINEAR, which Caffe uses
// for convert_imageset's -resize_width/-resize_height and the ImageData
// layer's new_height/new_width:
//
//   - pixel centres are aligned: destination x maps to source
//     (x + 0.5) * w/nw - 0.5, so the image is neither shifted nor cropped;
//   - coordinates past the edges are clamped to the border pixels;
//   - shrinking does not average over the source pixels a destination
//     pixel covers (no antialiasing), as in OpenCV;
//   - weights are 11-bit fixed point and the result is rounded, as in
//     OpenCV's reference (non-SIMD) code; its vectorised paths may differ
//     by one grey level in rare pixels.
//
// Resizing to the same size returns a copy of src.
func ResizeBilinear(src []byte, channels, h, w, nh, nw int) ([]byte, error) {
	var r Resizer
	return r.Resize(nil, src, channels, h, w, nh, nw)
}

// Resizer resizes as ResizeBilinear does, keeping its interpolation tables
// and row buffers between calls so that resizing a stream of images of one
// size allocates nothing. The zero value is ready to use; a Resizer is not
// safe for concurrent use.
type Resizer struct {
	xt, yt     taps
	row0, row1 []int
}

// Resize resizes src (channels x h x w bytes) to channels x nh x nw into
// dst, reusing dst's storage when it is large enough, and returns the
// resized planes.
func (r *Resizer) Resize(dst, src []byte, channels, h, w, nh, nw int) ([]byte, error) {
	return r.resize(dst, src, channels, h, w, nh, nw, false)
}

// resize is Resize, or with area OpenCV's INTER_AREA where it does not
// shrink along both axes: bilinear, with the weight of a destination
// pixel's second source the part of it lying past the first.
func (r *Resizer) resize(dst, src []byte, channels, h, w, nh, nw int, area bool) ([]byte, error) {
	if channels <= 0 || h <= 0 || w <= 0 || nh <= 0 || nw <= 0 {
		return nil, fmt.Errorf("resizing a %dx%dx%d image to %dx%d: every size must be positive", channels, h, w, nh, nw)
	}
	if len(src) != channels*h*w {
		return nil, fmt.Errorf("resizing a %dx%dx%d image: it holds %d bytes, want %d", channels, h, w, len(src), channels*h*w)
	}
	dst = grown(dst, channels*nh*nw)
	if nh == h && nw == w {
		copy(dst, src)
		return dst, nil
	}
	r.xt.plan(w, nw, area)
	r.yt.plan(h, nh, area)
	r.row0, r.row1 = grown(r.row0, nw), grown(r.row1, nw)
	for c := range channels {
		r.resizePlane(dst[c*nh*nw:(c+1)*nh*nw], src[c*h*w:(c+1)*h*w], w, nw)
	}
	return dst, nil
}

// resizePlane does the horizontal pass into rows of fixed-point values,
// then the vertical pass, as OpenCV's resizeGeneric_ does. Consecutive
// destination rows mostly read the same two source rows, so each
// interpolated source row is kept and reused while it is still needed.
func (r *Resizer) resizePlane(out, plane []byte, w, nw int) {
	const round = 1 << (2*resizeCoefBits - 1)
	row0, row1 := r.row0, r.row1
	have0, have1 := -1, -1 // the source rows in row0 and row1
	for y := range r.yt.i0 {
		y0, y1 := r.yt.i0[y], r.yt.i1[y]
		switch {
		case y0 == have0:
		case y0 == have1:
			row0, row1 = row1, row0
			have0, have1 = have1, have0
		default:
			hresize(row0, plane[y0*w:(y0+1)*w], &r.xt)
			have0 = y0
		}
		if y1 != have1 {
			if y1 == have0 {
				copy(row1, row0)
			} else {
				hresize(row1, plane[y1*w:(y1+1)*w], &r.xt)
			}
			have1 = y1
		}
		b0, b1 := r.yt.w0[y], r.yt.w1[y]
		o := out[y*nw : (y+1)*nw]
		r0, r1 := row0[:len(o)], row1[:len(o)]
		for x := range o {
			v := (b0*r0[x] + b1*r1[x] + round) >> (2 * resizeCoefBits)
			o[x] = byte(min(max(v, 0), 255))
		}
	}
}

// taps are, for each destination position along an axis, the two source
// indices it interpolates between and their fixed-point weights.
type taps struct {
	i0, i1 []int
	w0, w1 []int
	// src, dst and area are what the taps were planned for.
	src, dst int
	area     bool
}

// hresize interpolates one source row at the destination columns.
func hresize(dst []int, row []byte, t *taps) {
	n := len(t.i0)
	dst, i1, w0, w1 := dst[:n], t.i1[:n], t.w0[:n], t.w1[:n]
	for x, s := range t.i0 {
		dst[x] = w0[x]*int(row[s]) + w1[x]*int(row[i1[x]])
	}
}

// plan computes the taps for dst destination positions along an axis of
// src source pixels as OpenCV's resize computes them (in float32, then
// rounded to 11 bits); past the edges both indices are the border pixel.
// With area, the positions are INTER_AREA's when enlarging. Taps already
// planned for the same sizes are kept.
func (t *taps) plan(src, dst int, area bool) {
	if t.src == src && t.dst == dst && t.area == area && len(t.i0) == dst {
		return
	}
	t.src, t.dst, t.area = src, dst, area
	t.i0, t.i1 = grown(t.i0, dst), grown(t.i1, dst)
	t.w0, t.w1 = grown(t.w0, dst), grown(t.w1, dst)
	scale, inv := float64(src)/float64(dst), float64(dst)/float64(src)
	for d := range dst {
		var s int
		var f float32
		if area {
			s = int(math.Floor(float64(d) * scale))
			f = float32(float64(d+1) - float64(s+1)*inv)
			if f <= 0 {
				f = 0
			} else {
				f -= float32(math.Floor(float64(f)))
			}
		} else {
			f = float32((float64(d)+0.5)*scale - 0.5)
			s = int(math.Floor(float64(f)))
			f -= float32(s)
		}
		if s < 0 {
			s, f = 0, 0
		}
		if s >= src-1 {
			s, f = src-1, 0
		}
		a0 := int(math.RoundToEven(float64((1 - f) * resizeCoefScale)))
		t.i0[d], t.i1[d] = s, min(s+1, src-1)
		t.w0[d], t.w1[d] = a0, resizeCoefScale-a0
	}
}

// grown returns s with length n, reusing its storage when it is large
// enough.
func grown[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}
