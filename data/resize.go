package data

import (
	"fmt"
	"math"
)

// OpenCV's INTER_LINEAR works on 8-bit images in fixed point, with weights
// scaled by 2^11; ResizeBilinear does the same so that its results match
// the ones Caffe's convert_imageset gets from cv::resize.
const (
	resizeCoefBits  = 11
	resizeCoefScale = 1 << resizeCoefBits
)

// ResizeBilinear resizes an 8-bit image stored as a raw Datum stores it
// (channels planes of h rows of w bytes) to nh x nw, with bilinear
// interpolation as OpenCV's cv::resize with INTER_LINEAR, which Caffe uses
// for convert_imageset's -resize_width/-resize_height:
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
	if channels <= 0 || h <= 0 || w <= 0 || nh <= 0 || nw <= 0 {
		return nil, fmt.Errorf("resizing a %dx%dx%d image to %dx%d: every size must be positive", channels, h, w, nh, nw)
	}
	if len(src) != channels*h*w {
		return nil, fmt.Errorf("resizing a %dx%dx%d image: it holds %d bytes, want %d", channels, h, w, len(src), channels*h*w)
	}
	if nh == h && nw == w {
		return append([]byte(nil), src...), nil
	}
	xt := linearTaps(w, nw)
	yt := linearTaps(h, nh)
	dst := make([]byte, channels*nh*nw)
	// Horizontal pass into rows of fixed-point values, then the vertical
	// pass, as OpenCV's resizeGeneric_ does. Consecutive destination rows
	// mostly read the same two source rows, so each interpolated source row
	// is kept and reused while it is still needed.
	row0 := make([]int, nw)
	row1 := make([]int, nw)
	const round = 1 << (2*resizeCoefBits - 1)
	for c := range channels {
		plane := src[c*h*w : (c+1)*h*w]
		out := dst[c*nh*nw : (c+1)*nh*nw]
		have0, have1 := -1, -1 // the source rows in row0 and row1
		for y := range nh {
			y0, y1 := yt.i0[y], yt.i1[y]
			switch {
			case y0 == have0:
			case y0 == have1:
				row0, row1 = row1, row0
				have0, have1 = have1, have0
			default:
				hresize(row0, plane[y0*w:(y0+1)*w], &xt)
				have0 = y0
			}
			if y1 != have1 {
				if y1 == have0 {
					copy(row1, row0)
				} else {
					hresize(row1, plane[y1*w:(y1+1)*w], &xt)
				}
				have1 = y1
			}
			b0, b1 := yt.w0[y], yt.w1[y]
			o := out[y*nw : (y+1)*nw]
			r0, r1 := row0[:len(o)], row1[:len(o)]
			for x := range o {
				v := (b0*r0[x] + b1*r1[x] + round) >> (2 * resizeCoefBits)
				o[x] = byte(min(max(v, 0), 255))
			}
		}
	}
	return dst, nil
}

// taps are, for each destination position along an axis, the two source
// indices it interpolates between and their fixed-point weights.
type taps struct {
	i0, i1 []int
	w0, w1 []int
}

// hresize interpolates one source row at the destination columns.
func hresize(dst []int, row []byte, t *taps) {
	n := len(t.i0)
	dst, i1, w0, w1 := dst[:n], t.i1[:n], t.w0[:n], t.w1[:n]
	for x, s := range t.i0 {
		dst[x] = w0[x]*int(row[s]) + w1[x]*int(row[i1[x]])
	}
}

// linearTaps returns the taps for dst destination positions along an axis
// of src source pixels, computed as OpenCV's resize computes them (in
// float32, then rounded to 11 bits); past the edges both indices are the
// border pixel.
func linearTaps(src, dst int) taps {
	scale := float64(src) / float64(dst)
	t := taps{i0: make([]int, dst), i1: make([]int, dst), w0: make([]int, dst), w1: make([]int, dst)}
	for d := range dst {
		f := float32((float64(d)+0.5)*scale - 0.5)
		s := int(math.Floor(float64(f)))
		f -= float32(s)
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
	return t
}
