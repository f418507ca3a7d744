package data

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Resampler resizes 8-bit planar images with any of the interpolations
// SSD's resize_param names after OpenCV's: LINEAR is Resizer's fixed-point
// bilinear (OpenCV's, bit for bit in its reference code); NEAREST takes
// source pixel floor(x * w/nw); CUBIC (Keys' kernel, a = -0.75, 4 x 4
// taps), LANCZOS4 (8 x 8 taps) and AREA (the mean over the source area a
// destination pixel covers when shrinking; bilinear with OpenCV's
// area-preserving weights when enlarging) are separable filters computed
// in float32 and rounded to the nearest grey level, half to even. The three
// filters follow OpenCV's definitions but not its fixed-point arithmetic,
// so a pixel may differ from cv::resize by a grey level. Borders replicate
// the edge pixels. A Resampler keeps its tables and buffers; it is not safe
// for concurrent use.
type Resampler struct {
	linear Resizer
	xt, yt filterTaps
	rows   []float32
}

// filterTaps is one axis of a separable filter: destination i reads
// k source indices from idx[i*k:] with weights wt[i*k:].
type filterTaps struct {
	k   int
	idx []int
	wt  []float32
}

// Resize resizes src (channels x h x w) to channels x nh x nw with mode
// into dst's storage when large enough.
func (r *Resampler) Resize(mode caffepb.ResizeParameter_InterpMode, dst, src []byte, channels, h, w, nh, nw int) ([]byte, error) {
	switch mode {
	case caffepb.ResizeParameter_LINEAR:
		return r.linear.Resize(dst, src, channels, h, w, nh, nw)
	case caffepb.ResizeParameter_NEAREST, caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4, caffepb.ResizeParameter_AREA:
	default:
		return nil, fmt.Errorf("unknown interpolation %v", mode)
	}
	if channels <= 0 || h <= 0 || w <= 0 || nh <= 0 || nw <= 0 || len(src) != channels*h*w {
		return nil, fmt.Errorf("resizing a %dx%dx%d image of %d bytes to %dx%d: bad sizes", channels, h, w, len(src), nh, nw)
	}
	dst = grown(dst, channels*nh*nw)
	if nh == h && nw == w {
		copy(dst, src)
		return dst, nil
	}
	if mode == caffepb.ResizeParameter_NEAREST {
		resizeNearest(dst, src, channels, h, w, nh, nw)
		return dst, nil
	}
	if mode == caffepb.ResizeParameter_AREA && (nh > h || nw > w) {
		// OpenCV averages areas only when shrinking along both axes;
		// otherwise its INTER_AREA is bilinear with area positions.
		return r.linear.resize(dst, src, channels, h, w, nh, nw, true)
	}
	r.xt.plan(mode, w, nw)
	r.yt.plan(mode, h, nh)
	r.rows = grown(r.rows, h*nw)
	for c := range channels {
		r.filterPlane(dst[c*nh*nw:(c+1)*nh*nw], src[c*h*w:(c+1)*h*w], w, nw)
	}
	return dst, nil
}

func resizeNearest(dst, src []byte, channels, h, w, nh, nw int) {
	sx, sy := float64(w)/float64(nw), float64(h)/float64(nh)
	for c := range channels {
		in, out := src[c*h*w:(c+1)*h*w], dst[c*nh*nw:(c+1)*nh*nw]
		for y := range nh {
			row := in[min(int(math.Floor(float64(y)*sy)), h-1)*w:]
			for x := range nw {
				out[y*nw+x] = row[min(int(math.Floor(float64(x)*sx)), w-1)]
			}
		}
	}
}

// filterPlane filters every source row horizontally, then the columns.
func (r *Resampler) filterPlane(out, plane []byte, w, nw int) {
	xt, yt := &r.xt, &r.yt
	h := len(plane) / w
	for y := range h {
		row, acc := plane[y*w:(y+1)*w], r.rows[y*nw:(y+1)*nw]
		for x := range nw {
			var s float32
			for t := range xt.k {
				s += xt.wt[x*xt.k+t] * float32(row[xt.idx[x*xt.k+t]])
			}
			acc[x] = s
		}
	}
	nh := len(out) / nw
	for y := range nh {
		for x := range nw {
			var s float32
			for t := range yt.k {
				s += yt.wt[y*yt.k+t] * r.rows[yt.idx[y*yt.k+t]*nw+x]
			}
			out[y*nw+x] = saturateByte(s)
		}
	}
}

// saturateByte rounds to the nearest integer, half to even (OpenCV's
// cvRound), clamped to 0..255.
func saturateByte(v float32) byte {
	return byte(max(0, min(255, math.RoundToEven(float64(v)))))
}

// plan computes the taps mapping n source pixels to nn destination ones.
func (t *filterTaps) plan(mode caffepb.ResizeParameter_InterpMode, n, nn int) {
	scale := float64(n) / float64(nn)
	switch {
	case mode == caffepb.ResizeParameter_CUBIC:
		t.kernel(n, nn, scale, 4, cubicWeights)
	case mode == caffepb.ResizeParameter_LANCZOS4:
		t.kernel(n, nn, scale, 8, lanczos4Weights)
	default: // AREA, shrinking along both axes (Resize sends the rest to the bilinear path)
		t.area(n, nn, scale)
	}
}

// kernel places k taps around each destination pixel's centre in the
// source, (i + 0.5) * scale - 0.5, starting k/2 - 1 pixels left of it.
func (t *filterTaps) kernel(n, nn int, scale float64, k int, weights func(f float32, w []float32)) {
	t.reset(nn, k)
	for i := range nn {
		f := (float64(i)+0.5)*scale - 0.5
		s := int(math.Floor(f))
		weights(float32(f-float64(s)), t.wt[i*k:(i+1)*k])
		for j := range k {
			t.idx[i*k+j] = clampIndex(s-k/2+1+j, n)
		}
	}
}

// area gives each destination pixel the source pixels its cell covers,
// weighted by the covered part of each, over the cell's width.
func (t *filterTaps) area(n, nn int, scale float64) {
	k := int(math.Ceil(scale)) + 2 // partly covered pixels at both ends
	t.reset(nn, k)
	for i := range nn {
		f1 := float64(i) * scale
		f2 := f1 + scale
		cell := min(scale, float64(n)-f1)
		j := 0
		put := func(src int, w float64) {
			t.idx[i*k+j], t.wt[i*k+j] = clampIndex(src, n), float32(w/cell)
			j++
		}
		s1, s2 := int(math.Ceil(f1)), int(math.Floor(f2))
		if float64(s1)-f1 > 1e-3 {
			put(s1-1, float64(s1)-f1)
		}
		for s := s1; s < s2 && s < n; s++ {
			put(s, 1)
		}
		if f2-float64(s2) > 1e-3 && s2 < n {
			put(s2, min(f2-float64(s2), 1, cell))
		}
		for ; j < k; j++ { // unused taps
			t.idx[i*k+j], t.wt[i*k+j] = 0, 0
		}
	}
}

func (t *filterTaps) reset(nn, k int) {
	t.k = k
	t.idx = grown(t.idx, nn*k)
	t.wt = grown(t.wt, nn*k)
}

func clampIndex(i, n int) int { return max(0, min(i, n-1)) }

// cubicWeights are Keys' cubic convolution weights with a = -0.75 for the
// four pixels around a point f past the second of them.
func cubicWeights(f float32, w []float32) {
	const a = -0.75
	x := f + 1
	w[0] = ((a*x-5*a)*x+8*a)*x - 4*a
	w[1] = ((a+2)*f-(a+3))*f*f + 1
	y := 1 - f
	w[2] = ((a+2)*y-(a+3))*y*y + 1
	w[3] = 1 - w[0] - w[1] - w[2]
}

// lanczos4Weights are the Lanczos weights (window 4) of the eight pixels
// around a point f past the fourth of them, normalized to sum to 1.
func lanczos4Weights(f float32, w []float32) {
	if f < 1.1920929e-07 { // FLT_EPSILON: on a pixel
		clear(w)
		w[3] = 1
		return
	}
	var sum float64
	for i := range 8 {
		d := float64(f) + 3 - float64(i)
		x := math.Pi * d
		v := math.Sin(x) * math.Sin(x/4) / (x * x / 4)
		w[i] = float32(v)
		sum += v
	}
	for i := range w {
		w[i] = float32(float64(w[i]) / sum)
	}
}
