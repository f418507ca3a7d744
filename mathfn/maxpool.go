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
func (g *PoolWindows) MaxPoolScratch() int { return 2 * g.rowLen() }

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
	n := g.rowLen()
	row, slid := scratch[:n], scratch[n:2*n]
	floor := T(-math.MaxFloat32)
	for i := range row {
		row[i] = floor // the padding: never above a value that counts
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
