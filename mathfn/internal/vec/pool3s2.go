package vec

// Pool3x3S2 is the geometry of a 3x3 pooling of stride 2 without padding
// (CIFAR-10 quick's pools, CaffeNet's, most of GoogLeNet's): H x W planes
// pooled into OutH x OutW, every window starting inside the plane
// (Caffe's ceil or floor rounding) and clipped to it.
type Pool3x3S2 struct{ H, W, OutH, OutW int }

// pool3s2Masks holds, per chunk of sixteen outputs of a row, the masks
// the kernels load: the chunk's first 16 and next 16 input columns inside
// the plane, the 33rd column's, and the chunk's outputs. Sixteen chunks
// cover planes up to 512 columns wide.
type pool3s2Masks [4 * 16]uint16

// set fills the masks of the first chunks.
func (m *pool3s2Masks) set(g Pool3x3S2, chunks int) {
	lanes := func(k int) uint16 { return uint16(1)<<min(max(k, 0), 16) - 1 }
	for c := range chunks {
		m[4*c] = lanes(g.W - 32*c)
		m[4*c+1] = lanes(g.W - 32*c - 16)
		m[4*c+2] = lanes(min(g.W-32*c-32, 1))
		m[4*c+3] = lanes(g.OutW - 16*c)
	}
}

// fits reports whether the geometry is one the kernels take (windows
// starting inside the plane, at least one) and n planes fit the buffers
// (nin values of input, nout and nout2 of the outputs).
func (g Pool3x3S2) fits(n, nin, nout, nout2 int) bool {
	ok := n > 0 && g.OutH > 0 && g.OutW > 0 && 2*(g.OutH-1) < g.H && 2*(g.OutW-1) < g.W
	return ok && nin >= n*g.H*g.W && min(nout, nout2) >= n*g.OutH*g.OutW
}
