package normalization

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// bnBackHost is BatchNorm's backward pass with batch statistics on the
// host. The generic pass (batchNormBackward) sweeps the data about ten
// times on one core: a copy of dy when in place, a product, two sums, two
// broadcasts through k=1 GEMMs, a second product, Axpby's scale and add,
// and the division. Here two passes over rows (one image's channel)
// spread on the cores do the same arithmetic: the first sums y*dy and dy
// per row, the second computes dx row by row, which also works in place
// (each row of dy is read before its dx is written), so dy needs no copy.
// The row sums are the generic pass's gemv calls on ranges of rows (a row
// at a time through the same dot product) and every element goes through
// the same roundings in the same order, so dx is the generic pass's bit
// for bit (TestBatchNormHostBackwardMatchesGeneric). ResNet-50's and
// MobileNet's BatchNorm backward passes were the largest of their layers
// that are not products.
type bnBackHost[T layer.Float] struct {
	y, dy, dx, prodSums, dySums, s1, s2, std, ones []T
	scratch                                        [][]T // a row's product per part
	own                                            []T   // dy's row sums, then its channel sums
	channels, spatial                              int
	scale                                          T // -1/m, m the values of a channel
	// Method values, made once: a pass allocates nothing.
	sumPart, dxPart func(part, lo, hi int)
}

// backward computes the bottom's gradient of layer l with batch
// statistics: l.variance holds the forward pass's deviations, l.xNorm its
// normalised output.
func (h *bnBackHost[T]) backward(l *batchNormLayer[T], top, bottom []*blob.Blob[T]) {
	if h.sumPart == nil {
		h.sumPart, h.dxPart = h.sumRows, h.dxRows
	}
	rows, spatial := l.num*l.channels, l.spatial
	parts := mathfn.Parts(rows)
	for len(h.scratch) < parts {
		h.scratch = append(h.scratch, nil)
	}
	for p := range parts {
		h.scratch[p] = kit.Grow(h.scratch[p], spatial)
	}
	// The row sums: y*dy's in numByChans, the generic pass's place for
	// them, dy's in a buffer of this pass's own (temp, the forward pass's
	// scratch, may hold another blob by now: net/plan_liveness.go).
	h.own = kit.Grow(h.own, rows+l.channels)
	h.prodSums, h.dySums = l.numByChans.MutableCPUData(), h.own[:rows]
	h.y, h.dy, h.dx = l.xNorm.CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	h.channels, h.spatial = l.channels, spatial
	h.std, h.ones = l.variance.CPUData(), l.spatialOne.CPUData()
	kit.UnitsParallel(rows, spatial, h.sumPart)
	// The per-channel sums over the batch, as the generic pass takes them
	// (l.mean's memory is spent, as there).
	ones := l.batchOnes.CPUData()
	h.s1 = l.mean.MutableCPUData()
	mathfn.Gemv(blas.Trans, l.num, l.channels, 1, h.prodSums, ones, 0, h.s1)
	h.s2 = h.own[rows:]
	mathfn.Gemv(blas.Trans, l.num, l.channels, 1, h.dySums, ones, 0, h.s2)
	h.scale = -1 / T(l.num*spatial)
	kit.UnitsParallel(rows, spatial, h.dxPart)
	h.y, h.dy, h.dx, h.prodSums, h.dySums, h.s1, h.s2, h.std, h.ones = nil, nil, nil, nil, nil, nil, nil, nil, nil
}

// sumRows sets prodSums[r] = sum(y*dy) and dySums[r] = sum(dy) over the
// elements of rows [lo, hi): the generic pass's product and its gemv with
// ones, row by row.
func (h *bnBackHost[T]) sumRows(part, lo, hi int) {
	s, prod := h.spatial, h.scratch[part]
	for r := lo; r < hi; r++ {
		y, dy := h.y[r*s:(r+1)*s], h.dy[r*s:(r+1)*s]
		mathfn.Mul(s, y, dy, prod)
		mathfn.Gemv(blas.NoTrans, 1, s, 1, prod, h.ones, 0, h.prodSums[r:r+1])
		mathfn.Gemv(blas.NoTrans, 1, s, 1, dy, h.ones, 0, h.dySums[r:r+1])
	}
}

// dxRows computes dx over rows [lo, hi) as the generic pass does,
// rounding as it does: y*s1 + s2 (a broadcast product and a GEMM's sum),
// scaled by -1/m and added to dy (Axpby: Scal, then Axpy), divided by the
// deviation. T(...) keeps each product rounded on its own, never fused
// with the addition after it.
func (h *bnBackHost[T]) dxRows(_, lo, hi int) {
	s := h.spatial
	for r := lo; r < hi; r++ {
		c := r % h.channels
		s1, s2, std := h.s1[c], h.s2[c], h.std[c]
		y, dy, dx := h.y[r*s:(r+1)*s], h.dy[r*s:(r+1)*s], h.dx[r*s:(r+1)*s]
		for i := mathfn.BNDxPrefix(y, dy, dx, s1, s2, h.scale, std); i < len(y); i++ {
			t := T(y[i]*s1) + s2
			dx[i] = (T(t*h.scale) + dy[i]) / std
		}
	}
}
