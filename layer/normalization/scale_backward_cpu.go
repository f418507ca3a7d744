package normalization

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// scaleBackHost is Scale's backward pass on the host for a learnable scale
// over planes (inner > 1). The generic pass (scaleBackward) sweeps the
// arrays five times on one core: the bias's row sums of dy, the product
// dy*x, its row sums, and dx = dy*s, each over the whole blob. Here one
// pass over rows (one image's channel, which stays in the core's cache)
// spread on the cores does the same arithmetic row by row: dy*x into a
// scratch row and its sum, dy's sum, then dx, which works in place (a
// row of dy is read before its dx is written). The row sums are the
// generic pass's gemv calls on single rows (the same dot product) and the
// channel sums the same gemv over the row sums, so every gradient is the
// generic pass's bit for bit (TestScaleHostBackwardMatchesGeneric).
// MobileNet's and ResNet-50's Scale backward passes took a tenth of their
// training iteration on two cores.
type scaleBackHost[T layer.Float] struct {
	x, dy, dx, s, ones []T
	prodSums, dySums   []T   // a row's sum each, both in sums
	sums               []T   // kept across passes
	scratch            [][]T // a row's product per part
	channels, inner    int
	wantBias, wantDx   bool
	rowPart            func(part, lo, hi int) // made once: a pass allocates nothing
}

// backwardFast runs the pass when it applies (a learnable scale, planes
// of more than one value) and reports whether it did.
func (l *scaleLayer[T]) backwardFast(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) bool {
	if len(bottom) != 1 || !l.ParamPropagateDown(0) || l.shape.Inner <= 1 || l.shape.Outer*l.shape.Dim <= 1 {
		return false
	}
	h := &l.back
	if h.rowPart == nil {
		h.rowPart = h.rows
	}
	rows, inner := l.shape.Outer*l.shape.Dim, l.shape.Inner
	parts := mathfn.Parts(rows)
	for len(h.scratch) < parts {
		h.scratch = append(h.scratch, nil)
	}
	for p := range parts {
		h.scratch[p] = kit.Grow(h.scratch[p], inner)
	}
	h.sums = kit.Grow(h.sums, 2*rows)
	h.prodSums, h.dySums = h.sums[:rows], h.sums[rows:]
	h.x = bottom[0].CPUData()
	if bottom[0] == top[0] {
		h.x = l.kept().CPUData() // the bottom, kept by the forward pass
	}
	h.dy = top[0].CPUDiff()
	h.wantDx = propagateDown[0]
	if h.wantDx {
		h.dx = bottom[0].MutableCPUDiff()
	}
	h.wantBias = l.biasIndex >= 0 && l.ParamPropagateDown(l.biasIndex)
	h.s, h.ones = l.Blobs()[0].CPUData(), l.buf.OnesCPU()
	h.channels, h.inner = l.shape.Dim, inner
	kit.UnitsParallel(rows, inner, h.rowPart)
	// The channel sums over the outer axis, added to the diffs as the
	// generic pass's second gemv does.
	outerOnes := h.ones[:l.shape.Outer]
	if h.wantBias {
		mathfn.Gemv(blas.Trans, l.shape.Outer, l.shape.Dim, 1, h.dySums, outerOnes, 1, l.Blobs()[l.biasIndex].MutableCPUDiff())
	}
	mathfn.Gemv(blas.Trans, l.shape.Outer, l.shape.Dim, 1, h.prodSums, outerOnes, 1, l.Blobs()[0].MutableCPUDiff())
	h.x, h.dy, h.dx, h.s, h.ones, h.prodSums, h.dySums = nil, nil, nil, nil, nil, nil, nil
	return true
}

// rows computes rows [lo, hi): the row sums of dy*x and dy, then dx.
func (h *scaleBackHost[T]) rows(part, lo, hi int) {
	n, prod := h.inner, h.scratch[part]
	ones := h.ones[:n]
	for r := lo; r < hi; r++ {
		x, dy := h.x[r*n:(r+1)*n], h.dy[r*n:(r+1)*n]
		if h.wantBias {
			mathfn.Gemv(blas.NoTrans, 1, n, 1, dy, ones, 0, h.dySums[r:r+1])
		}
		mathfn.Mul(n, dy, x, prod)
		mathfn.Gemv(blas.NoTrans, 1, n, 1, prod, ones, 0, h.prodSums[r:r+1])
		if h.wantDx {
			mathfn.MulScalar(n, h.s[r%h.channels], dy, h.dx[r*n:(r+1)*n])
		}
	}
}
