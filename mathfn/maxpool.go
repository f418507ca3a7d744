package mathfn

import "math"

// PoolWindows is the geometry of max pooling over one H x W plane: OutH x
// OutW windows of KernelH x KernelW, StrideH and StrideW apart, the first
// starting PadH rows above and PadW columns left of the plane, each
// clipped to the plane (Caffe's MAX pooling).
type PoolWindows struct {
	H, W             int
	OutH, OutW       int
	KernelH, KernelW int
	StrideH, StrideW int
	PadH, PadW       int
}

// rowLen is the length of a padded row of column maxima: every window's
// columns, from -PadW, and the whole plane's.
func (g *PoolWindows) rowLen() int {
	return max((g.OutW-1)*g.StrideW+g.KernelW, g.PadW+g.W)
}

// MaxPoolScratch is the length of the scratch MaxPoolValues needs.
func (g *PoolWindows) MaxPoolScratch() int {
	if g.samePlane() {
		return max(2*g.rowLen(), g.H*g.W+g.PadW+g.KernelW)
	}
	return g.rowRoom() + g.rowLen()
}

// rowRoom is the length of the row of column maxima in the scratch: the
// row, or with a stride of 2 what the vector kernel reads of it.
func (g *PoolWindows) rowRoom() int {
	if g.StrideW == 2 {
		return max(g.rowLen(), slideMaxS2Room(g.OutW, g.KernelW))
	}
	return g.rowLen()
}

// slideMaxS2Room is how many values of its source slideMaxS2Vector reads
// for n outputs of windows of k: whole blocks of 16 outputs, 32 values
// each, plus the last window's k-1.
func slideMaxS2Room(n, k int) int { return (n+15)/16*32 + k - 1 }

// samePlane reports whether the pooling keeps the plane's size with
// centred windows (stride 1, odd kernels, pad half the kernel: GoogLeNet's
// inception pools), which MaxPoolValues does a plane at a time.
func (g *PoolWindows) samePlane() bool {
	return g.StrideH == 1 && g.StrideW == 1 && g.KernelH == 2*g.PadH+1 && g.KernelW == 2*g.PadW+1 &&
		g.OutH == g.H && g.OutW == g.W && g.H > 0 && g.W > 0
}

// MaxPoolValues writes into y (OutH x OutW) each window's largest value of
// plane x, for a forward pass that needs no argmax (inference): the
// largest value above -MaxFloat32, NaNs skipped, as Caffe's loop finds it,
// and -MaxFloat32 where no value is above it (an empty or all-NaN window:
// the caller, which may want Caffe's answer for those, finds them by that
// value). Of equal values it may keep another than Caffe's first (+0 for
// -0). It is separable, unlike Caffe's window-by-window loop: per output
// row, the column maxima over the window's rows (vector maxima along the
// rows), then the maxima of KernelW neighbours along that row, read every
// StrideW-th. scratch holds MaxPoolScratch values.
func MaxPoolValues[T Float](g *PoolWindows, x, y, scratch []T) {
	if g.samePlane() {
		maxPoolSame(g, x, y, scratch)
		return
	}
	n, room := g.rowLen(), g.rowRoom()
	row, slid := scratch[:n], scratch[room:room+n]
	floor := T(-math.MaxFloat32)
	for i := range scratch[:room] {
		scratch[i] = floor // the padding: never above a value that counts
	}
	span := (g.OutW-1)*g.StrideW + 1 // the window starts, one per column
	for oh := range g.OutH {
		out := y[oh*g.OutW : (oh+1)*g.OutW]
		h0 := oh*g.StrideH - g.PadH
		h1 := min(h0+g.KernelH, g.H)
		h0 = max(h0, 0)
		if h0 >= h1 {
			for i := range out {
				out[i] = floor
			}
			continue
		}
		colMax(row[g.PadW:g.PadW+g.W], x[h0*g.W:], h1-h0, g.W)
		if g.StrideW == 1 {
			slideMax(out, row, g.KernelW)
			continue
		}
		// Stride 2 (GoogLeNet's and CaffeNet's 3x3 pools): the windows'
		// maxima straight from the row, rather than every sliding
		// window's and then every other one in Go.
		if g.StrideW == 2 && slideMaxS2Vector(out, scratch[:room], g.KernelW) {
			continue
		}
		slideMax(slid[:span], row, g.KernelW)
		for i := range out {
			out[i] = slid[i*g.StrideW]
		}
	}
}

// colMax sets dst[i] to the largest of x[r*ld + i] over rows r above
// -MaxFloat32 (NaNs never larger), or -MaxFloat32.
func colMax[T Float](dst, x []T, rows, ld int) {
	if len(dst) == 0 || colMaxVector(dst, x, rows, ld) {
		return
	}
	for i := range dst {
		best := T(-math.MaxFloat32)
		for r := range rows {
			if v := x[r*ld+i]; v > best {
				best = v
			}
		}
		dst[i] = best
	}
}

// slideMax sets dst[i] to the largest of src[i : i+k] (src holds no NaN).
func slideMax[T Float](dst, src []T, k int) {
	if len(dst) == 0 || slideMaxVector(dst, src, k) {
		return
	}
	for i := range dst {
		m := src[i]
		for _, v := range src[i+1 : i+k] {
			m = max(m, v)
		}
		dst[i] = m
	}
}

// maxPoolSame is MaxPoolValues where samePlane holds, with a few calls a
// plane rather than two a row (a 14x14 plane has fewer values than the
// calls cost): the column maxima of all the rows whose windows lie inside
// the plane in one colMax over the plane's rows end to end, the others
// row by row; then one slideMax over all those maxima, laid end to end
// with the padding's floor before and after, which is each window's
// maximum except in the columns whose windows cross the plane's left or
// right edge (they would take values of the row before or after): those
// again, clipped to the row.
func maxPoolSame[T Float](g *PoolWindows, x, y, scratch []T) {
	h, w, ph, pw := g.H, g.W, g.PadH, g.PadW
	floor := T(-math.MaxFloat32)
	buf := scratch[:pw+h*w+g.KernelW]
	for i := range pw {
		buf[i] = floor
	}
	for i := pw + h*w; i < len(buf); i++ {
		buf[i] = floor
	}
	v := buf[pw : pw+h*w]                  // the column maxima, row after row
	inner0, inner1 := ph, h-g.KernelH+ph+1 // rows whose windows are whole
	if inner1 > inner0 {
		colMax(v[inner0*w:inner1*w], x, g.KernelH, w)
	} else {
		inner0, inner1 = h, h
	}
	for oh := range h {
		if oh >= inner0 && oh < inner1 {
			continue
		}
		h0, h1 := max(oh-ph, 0), min(oh-ph+g.KernelH, h)
		colMax(v[oh*w:(oh+1)*w], x[h0*w:], h1-h0, w)
	}
	slideMax(y[:h*w], buf, g.KernelW)
	if pw == 0 {
		return
	}
	if g.KernelW == 3 && pw == 1 && w >= 2 {
		// GoogLeNet's inception pools: each row's two edge windows
		// hold two columns. rowMax's clipped loop, called twice a row,
		// took a quarter of a 14x14 plane's time.
		for oh := range h {
			row, out := v[oh*w:(oh+1)*w], y[oh*w:(oh+1)*w]
			out[0], out[w-1] = max(row[0], row[1]), max(row[w-2], row[w-1])
		}
		return
	}
	right := max(w-pw, pw) // the first column whose window crosses the right edge
	for oh := range h {
		row, out := v[oh*w:(oh+1)*w], y[oh*w:(oh+1)*w]
		for ow := range min(pw, w) {
			out[ow] = rowMax(row, ow-pw, ow-pw+g.KernelW)
		}
		for ow := right; ow < w; ow++ {
			out[ow] = rowMax(row, ow-pw, ow-pw+g.KernelW)
		}
	}
}

// rowMax is the largest of row[lo:hi] clipped to the row (-MaxFloat32 if
// empty).
func rowMax[T Float](row []T, lo, hi int) T {
	m := T(-math.MaxFloat32)
	for _, c := range row[max(lo, 0):min(hi, len(row))] {
		m = max(m, c)
	}
	return m
}
