package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// The host's direct depthwise convolution: one 3x3 filter per channel
// (MobileNet's), stride 1 or 2, any padding. Caffe runs such a layer as a
// grouped convolution, im2col and a GEMM of one row per channel, which
// spends its time rearranging (MobileNet v1 at batch 1 took 2.5x OpenCV's
// time on a 2-vCPU AVX-512 machine). Here each channel's plane is copied
// once into a zero-padded buffer and each output row is nine taps summed
// by mathfn.Taps9, or at a horizontal stride of 2 by mathfn.Taps9S2,
// which takes the even and odd columns apart in its registers; the filter
// gradient is nine dot products per row (mathfn.Dots9, over a plane with
// each row's even and odd columns apart at a horizontal stride of 2, so
// that every tap reads contiguously); the bottom
// gradient is the same sum over the zero-padded output gradient (stride
// 1) or a scatter (stride 2). The planes of the pass are spread over the
// cores, so a batch of one keeps them all busy.

// dwConv is the scratch of the direct path, per part of a pass.
type dwConv[T layer.Float] struct {
	planes, grads [][]T // a padded input plane; a padded gradient plane
	outs          [][]T // stride 1: a plane's output at the padded row length
	rows          [][]T // stride 1, backward: dy at the padded row length; dx at q's
	wdiffs        [][]T // per part: filter gradient (C x 9) and bias gradient (C)

	// The pass in progress, read by the part bodies.
	in, out, dy, dx []T
	w, b            []T
	ep              mathfn.Epilogue[T]
	needW, needB    bool
	forward, back   func(part, lo, hi int) // made once: passes allocate nothing
}

// dwApplies reports whether the direct path computes the layer: a 2-D
// convolution over axis 1 with one 3x3 filter per channel, no dilation,
// strides of 1 or 2.
func (l *convBase[T]) dwApplies() bool {
	return !l.reverse && l.channelAxis == 1 && l.numSpatial == 2 && l.group == l.channels && l.numOutput == l.channels &&
		l.kernel[0] == 3 && l.kernel[1] == 3 && l.dilation[0] == 1 && l.dilation[1] == 1 &&
		l.stride[0] <= 2 && l.stride[1] <= 2 && !l.geo.ForceND
}

// dwGeometry is the padded plane's shape: rows, row length, and for a
// horizontal stride of 2 where the odd columns start in a row.
func (l *convBase[T]) dwGeometry() (hp, wp, odd int) {
	hp, wp = l.geo.In[0]+2*l.pad[0], l.geo.In[1]+2*l.pad[1]
	return hp, wp, (wp + 1) / 2
}

// dwParts sizes the scratch for a pass over planes planes and returns how
// many parts it runs in.
func (l *convBase[T]) dwParts(planes int, grads bool) int {
	d := &l.dw
	if d.forward == nil {
		d.forward, d.back = l.dwForwardPart, l.dwBackwardPart
	}
	parts := mathfn.Parts(planes)
	hp, wp, _ := l.dwGeometry()
	ho, wo := l.geo.Out[0], l.geo.Out[1]
	for len(d.planes) < parts {
		d.planes, d.grads, d.wdiffs, d.outs = append(d.planes, nil), append(d.grads, nil), append(d.wdiffs, nil), append(d.outs, nil)
		d.rows = append(d.rows, nil)
	}
	for p := range parts {
		// 16 past the plane: Taps9S2's vectors read that far past the
		// last row's taps.
		d.planes[p] = kit.Grow(d.planes[p], hp*wp+16)
		if l.stride[0] == 1 && l.stride[1] == 1 {
			d.outs[p] = kit.Grow(d.outs[p], ho*wp)
		}
		if grads {
			d.grads[p] = kit.Grow(d.grads[p], max((ho+4)*(wo+4), hp*wp))
			d.wdiffs[p] = kit.Grow(d.wdiffs[p], 10*l.channels)
			if l.stride[0] == 1 && l.stride[1] == 1 {
				d.rows[p] = kit.Grow(d.rows[p], max(ho*wp, l.geo.In[0]*(wo+4)))
			}
		}
	}
	return parts
}

// dwPlane copies one channel's H x W plane into dst, zero-padded, with
// each row's even and odd columns apart when split is set and the
// horizontal stride is 2 (the filter gradient's layout).
func (l *convBase[T]) dwPlane(x, dst []T, split bool) {
	h, w := l.geo.In[0], l.geo.In[1]
	ph, pw := l.pad[0], l.pad[1]
	hp, wp, odd := l.dwGeometry()
	for r := range hp {
		row := dst[r*wp : (r+1)*wp]
		if r < ph || r >= ph+h {
			clear(row)
			continue
		}
		src := x[(r-ph)*w : (r-ph+1)*w]
		if l.stride[1] == 1 || !split {
			clear(row[:pw])
			copy(row[pw:], src)
			clear(row[pw+w:])
			continue
		}
		// Padded column i goes to row[i/2] (even) or row[odd+i/2] (odd).
		clear(row)
		even, rest := row[:odd], row[odd:]
		dwDeinterleave(even[(pw+pw&1)/2:], src[pw&1:]) // i = s+pw even
		dwDeinterleave(rest[(pw+1-pw&1)/2:], src[1-pw&1:])
	}
}

// dwTaps sets off to where the nine taps of output row y read in the
// padded plane.
func (l *convBase[T]) dwTaps(y int, off *[9]int) {
	_, wp, odd := l.dwGeometry()
	for ky := range 3 {
		base := (y*l.stride[0] + ky) * wp
		if l.stride[1] == 1 {
			off[ky*3], off[ky*3+1], off[ky*3+2] = base, base+1, base+2
		} else {
			off[ky*3], off[ky*3+1], off[ky*3+2] = base, base+odd, base+1
		}
	}
}

// forwardDepthwise computes every top: act(w * x + b), with b nil for no
// bias and the activation from ep (its ReLU; no row or column bias).
func (l *convBase[T]) forwardDepthwise(bottom, top []*blob.Blob[T], w, b []T, ep mathfn.Epilogue[T]) error {
	d := &l.dw
	d.w, d.b, d.ep = w, b, ep
	l.hostParams()
	for i := range bottom {
		d.in, d.out = bottom[i].CPUData(), top[i].MutableCPUData()
		planes := l.num * l.channels
		l.dwParts(planes, false)
		mathfn.Parallel(planes, d.forward)
	}
	d.in, d.out, d.w, d.b = nil, nil, nil, nil
	return nil
}

func (l *convBase[T]) dwForwardPart(part, lo, hi int) {
	d := &l.dw
	plane := d.planes[part]
	hw, ohw := l.geo.In[0]*l.geo.In[1], l.geo.Out[0]*l.geo.Out[1]
	ho, wo := l.geo.Out[0], l.geo.Out[1]
	relu := d.ep.ReLU && d.ep.Slope == 0
	var off [9]int
	for p := lo; p < hi; p++ {
		c := p % l.channels
		l.dwPlane(d.in[p*hw:(p+1)*hw], plane, false)
		w := (*[9]T)(d.w[c*9 : c*9+9])
		var bias T
		if d.b != nil {
			bias = d.b[c]
		}
		out := d.out[p*ohw : (p+1)*ohw]
		if l.stride[0] == 1 && l.stride[1] == 1 {
			// All rows in one run at the padded row length (the two
			// columns past each row's end computed and dropped): one
			// call per plane, long vectors on small planes.
			_, wp, _ := l.dwGeometry()
			l.dwTaps(0, &off)
			o := d.outs[part]
			mathfn.Taps9(o, plane, &off, w, (ho-1)*wp+wo, bias, relu)
			for y := range ho {
				copy(out[y*wo:(y+1)*wo], o[y*wp:y*wp+wo])
			}
		} else if l.stride[1] == 2 {
			_, wp, _ := l.dwGeometry()
			mathfn.Taps9S2(out, wo, plane, l.stride[0]*wp, wp, w, ho, wo, bias, relu)
		} else {
			for y := range ho {
				l.dwTaps(y, &off)
				mathfn.Taps9(out[y*wo:(y+1)*wo], plane, &off, w, wo, bias, relu)
			}
		}
		if d.ep.ReLU && d.ep.Slope != 0 {
			for i, v := range out {
				if v < 0 {
					out[i] = v * d.ep.Slope
				}
			}
		}
	}
}

// backwardDepthwise accumulates the filter and bias gradients and writes
// the bottoms' gradients where propagateDown says.
func (l *convBase[T]) backwardDepthwise(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	d := &l.dw
	d.needW, d.needB = l.ParamPropagateDown(0), l.biasTerm && l.ParamPropagateDown(1)
	l.hostParams()
	d.w = l.Blobs()[0].CPUData()
	planes := l.num * l.channels
	for i := range top {
		if !d.needW && !d.needB && !propagateDown[i] {
			continue
		}
		d.in, d.dy, d.dx = bottom[i].CPUData(), top[i].CPUDiff(), nil
		if propagateDown[i] {
			d.dx = bottom[i].MutableCPUDiff()
		}
		parts := l.dwParts(planes, true)
		for p := range parts {
			clear(d.wdiffs[p])
		}
		mathfn.Parallel(planes, d.back)
		// Each part's sums into the blobs' gradients (they accumulate).
		if d.needW {
			wd := l.Blobs()[0].MutableCPUDiff()
			for p := range parts {
				mathfn.Axpy(len(wd), 1, d.wdiffs[p][:9*l.channels], wd)
			}
		}
		if d.needB {
			bd := l.Blobs()[1].MutableCPUDiff()
			for p := range parts {
				mathfn.Axpy(len(bd), 1, d.wdiffs[p][9*l.channels:], bd)
			}
		}
	}
	d.in, d.dy, d.dx, d.w = nil, nil, nil, nil
	return nil
}

func (l *convBase[T]) dwBackwardPart(part, lo, hi int) {
	d := &l.dw
	plane, grad, acc := d.planes[part], d.grads[part], d.wdiffs[part]
	h, wd := l.geo.In[0], l.geo.In[1]
	ho, wo := l.geo.Out[0], l.geo.Out[1]
	hw, ohw := h*wd, ho*wo
	var off [9]int
	for p := lo; p < hi; p++ {
		c := p % l.channels
		dy := d.dy[p*ohw : (p+1)*ohw]
		if d.needB {
			var s T
			for _, v := range dy {
				s += v
			}
			acc[9*l.channels+c] += s
		}
		if d.needW {
			l.dwPlane(d.in[p*hw:(p+1)*hw], plane, true)
			dw := (*[9]T)(acc[c*9 : c*9+9])
			if l.stride[0] == 1 && l.stride[1] == 1 {
				l.dwFilterGradPlane(dw, dy, plane, d.rows[part])
			} else {
				for y := range ho {
					l.dwTaps(y, &off)
					mathfn.Dots9(dw, dy[y*wo:(y+1)*wo], plane, &off, wo)
				}
			}
		}
		if d.dx != nil {
			l.dwBottomGrad(dy, d.dx[p*hw:(p+1)*hw], (*[9]T)(d.w[c*9:c*9+9]), grad, d.rows[part])
		}
	}
}

// dwFilterGradPlane adds to dw, with stride 1, the nine taps' dot
// products of a plane's top gradient dy with the padded input plane, in
// one run over the plane: dy laid out at the padded row length, the two
// columns past each row's end zero, so that the taps those columns meet
// add nothing (long vectors on small planes, as the forward pass).
func (l *convBase[T]) dwFilterGradPlane(dw *[9]T, dy, plane, rows []T) {
	ho, wo := l.geo.Out[0], l.geo.Out[1]
	_, wp, _ := l.dwGeometry()
	for y := range ho {
		row := rows[y*wp : (y+1)*wp]
		copy(row, dy[y*wo:(y+1)*wo])
		clear(row[wo:])
	}
	var off [9]int
	l.dwTaps(0, &off)
	n := (ho-1)*wp + wo
	mathfn.Dots9(dw, rows[:n], plane, &off, n)
}

// dwBottomGrad writes one plane's bottom gradient dx from its top
// gradient dy: with stride 1 the nine taps over dy zero-padded by 2 (the
// filter's taps read in reverse) in one run at q's row length into rows,
// then cropped; with stride 2 a scatter into the padded plane, cropped.
func (l *convBase[T]) dwBottomGrad(dy, dx []T, w *[9]T, grad, rows []T) {
	h, wd := l.geo.In[0], l.geo.In[1]
	ho, wo := l.geo.Out[0], l.geo.Out[1]
	ph, pw := l.pad[0], l.pad[1]
	if l.stride[0] == 1 && l.stride[1] == 1 {
		qw := wo + 4
		q := grad[:(ho+4)*qw]
		clear(q[:2*qw])
		for y := range ho {
			row := q[(y+2)*qw : (y+3)*qw]
			clear(row[:2])
			copy(row[2:], dy[y*wo:(y+1)*wo])
			clear(row[2+wo:])
		}
		clear(q[(ho+2)*qw:])
		var off [9]int
		for ky := range 3 {
			for kx := range 3 {
				off[ky*3+kx] = (ph-ky+2)*qw + pw - kx + 2
			}
		}
		n := (h-1)*qw + wd
		mathfn.Taps9(rows[:n], q, &off, w, n, 0, false)
		for i := range h {
			copy(dx[i*wd:(i+1)*wd], rows[i*qw:])
		}
		return
	}
	hp, wp, _ := l.dwGeometry()
	g := grad[:hp*wp]
	clear(g)
	sh, sw := l.stride[0], l.stride[1]
	for y := range ho {
		for ky := range 3 {
			row := g[(y*sh+ky)*wp:]
			w0, w1, w2 := w[ky*3], w[ky*3+1], w[ky*3+2]
			for x, v := range dy[y*wo : (y+1)*wo] {
				r := row[x*sw : x*sw+3]
				r[0] += w0 * v
				r[1] += w1 * v
				r[2] += w2 * v
			}
		}
	}
	for i := range h {
		copy(dx[i*wd:(i+1)*wd], g[(i+ph)*wp+pw:])
	}
}

// dwDeinterleave sets dst[i] = src[2i] for every such src element.
func dwDeinterleave[T layer.Float](dst, src []T) {
	n := (len(src) + 1) / 2
	dst = dst[:n]
	i := 0
	for ; i+1 < n; i += 2 {
		s := src[2*i : 2*i+3]
		dst[i], dst[i+1] = s[0], s[2]
	}
	if i < n {
		dst[i] = src[2*i]
	}
}
