//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// HasPool3x3S2 says whether MaxPool3x3S2, AvePool3x3S2 and
// AvePool3x3S2Back run here (AVX-512).
var HasPool3x3S2 = cpu.X86.HasAVX512F

//go:noescape
func maxPool3s2AVX512(x, y, idx *float32, n, w, h, oh, ow int, masks *uint16, chunks int)

//go:noescape
func avePool3s2AVX512(x, y, unused *float32, n, w, h, oh, ow int, masks *uint16, chunks int)

//go:noescape
func maxPool3s2BackAVX512(dy, dx, idx *float32, n, w, h, oh, ow int, masks *uint16, chunks int)

//go:noescape
func avePool3s2BackAVX512(dy, dx, unused *float32, n, w, h, oh, ow int, masks *uint16, chunks int)

// MaxPool3x3S2 pools n planes of g with Caffe's MAX: each window's first
// largest value above -FLT_MAX (NaNs never are) into y and its position
// in the plane, as a float, into idx; -FLT_MAX and -1 where there is
// none. It reports false, doing nothing, where it has no kernel.
func MaxPool3x3S2(g Pool3x3S2, n int, x, y, idx []float32) bool {
	var m pool3s2Masks
	chunks, ok := g.forward(&m, n, len(x), len(y), len(idx))
	if ok {
		maxPool3s2AVX512(&x[0], &y[0], &idx[0], n, g.W, g.H, g.OutH, g.OutW, &m[0], chunks)
	}
	return ok
}

// AvePool3x3S2 pools n planes of g with Caffe's AVE: each window's sum
// in row-major order divided by its size clipped to the plane. It reports
// false, doing nothing, where it has no kernel.
func AvePool3x3S2(g Pool3x3S2, n int, x, y []float32) bool {
	var m pool3s2Masks
	chunks, ok := g.forward(&m, n, len(x), len(y), len(y))
	if ok {
		avePool3s2AVX512(&x[0], &y[0], nil, n, g.W, g.H, g.OutH, g.OutW, &m[0], chunks)
	}
	return ok
}

// AvePool3x3S2Back sets dx, n planes of g, to AVE's gradient: each
// window's dy divided by its size added to its elements, window after
// window in row-major order, from zero (every element written once, dx
// read never). It reports false, doing nothing,
// where it has no kernel.
func AvePool3x3S2Back(g Pool3x3S2, n int, dy, dx []float32) bool {
	if !HasPool3x3S2 || !g.fits(n, len(dx), len(dy), len(dy)) {
		return false
	}
	var m pool3s2Masks
	chunks := (g.W + 31) / 32
	if chunks > len(m)/4 {
		return false
	}
	m.set(g, chunks)
	avePool3s2BackAVX512(&dy[0], &dx[0], nil, n, g.W, g.H, g.OutH, g.OutW, &m[0], chunks)
	return true
}

// MaxPool3x3S2Back sets dx, n planes of g, to MAX's gradient: each
// window's dy added to the element its argmax idx (MaxPool3x3S2's) names,
// window after window in row-major order, from zero (every element
// written once, dx read never). It reports false, doing nothing, where it
// has no kernel.
func MaxPool3x3S2Back(g Pool3x3S2, n int, dy, idx, dx []float32) bool {
	if !HasPool3x3S2 || !g.fits(n, len(dx), len(dy), len(idx)) {
		return false
	}
	var m pool3s2Masks
	chunks := (g.W + 31) / 32
	if chunks > len(m)/4 {
		return false
	}
	m.set(g, chunks)
	maxPool3s2BackAVX512(&dy[0], &dx[0], &idx[0], n, g.W, g.H, g.OutH, g.OutW, &m[0], chunks)
	return true
}

// forward checks the geometry and buffers for a forward kernel and fills
// m: one chunk per sixteen outputs of a row.
func (g Pool3x3S2) forward(m *pool3s2Masks, n, nx, ny, nidx int) (int, bool) {
	chunks := (g.OutW + 15) / 16
	if !HasPool3x3S2 || chunks > len(m)/4 || !g.fits(n, nx, ny, nidx) {
		return 0, false
	}
	m.set(g, chunks)
	return chunks, true
}
