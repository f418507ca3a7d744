package normalization

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// bnHost is BatchNorm's forward pass on the host. The generic pass
// (batchNormForward, Caffe's sequence of BLAS calls) sweeps the data some
// eight times: a copy, a broadcast of the mean, the squares, a broadcast
// of the deviations, a division and a copy, beside the two sums. Here the
// sums stay as they are (the same gemv calls, so the same statistics)
// and the rest is passes over rows (an image's channel) spread on the
// cores, each reading x: with batch statistics, (x - mean)^2 into a row
// of scratch of the part's own, summed while in the cache; then y = xNorm
// = (x - mean) / std. The sums are the generic pass's gemv calls a row at
// a time (the same dot products). Each value is computed by the same
// operations as in the generic pass (a subtraction, a square, a division,
// rounded one by one; eight at a time where mathfn has vector kernels),
// so the results are the same bit for bit. The bottom is read three
// times and the top and xNorm written once; the centred values are
// computed twice rather than stored and read back (a pass that wrote y =
// x - mean and temp = its squares, then read y for the division, moved
// twice the memory, and BatchNorm on the host is bound by memory).
// ResNet-50's BatchNorm forward at batch 4 on 2 cores: 58 ms through the
// generic pass against Caffe's 51.
type bnHost[T layer.Float] struct {
	x, y, temp, xNorm, mean, std []T
	rowSums, ones                []T   // a row's sum each (numByChans), spatialOne
	squares                      [][]T // a row of scratch per part
	alpha                        T     // 1/m, m the values of a channel
	channels, spatial            int
	// Method values, made once: a pass allocates nothing.
	variance, normalize, divide, sumX func(part, lo, hi int)
	// divStd is divideRows' entry, made once; src and dst its operands.
	divStd   func(src, dst []T)
	src, dst []T
}

// divideByStd returns the function that sets dst = src / std, std the
// per-channel deviations the forward pass left in l.variance: the same
// divisions as by temp, where the forward pass broadcast them, so the
// backward pass leaves temp alone.
func (h *bnHost[T]) divideByStd(l *batchNormLayer[T]) func(src, dst []T) {
	if h.divStd == nil {
		h.divide = h.divideRows
		h.divStd = func(src, dst []T) {
			h.src, h.dst, h.std, h.channels, h.spatial = src, dst, l.variance.CPUData(), l.channels, l.spatial
			kit.UnitsParallel(len(dst)/h.spatial, h.spatial, h.divide)
			h.src, h.dst, h.std = nil, nil, nil
		}
	}
	return h.divStd
}

// divideRows sets dst = src / std over rows [lo, hi).
func (h *bnHost[T]) divideRows(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		off, s := r*h.spatial, h.std[r%h.channels]
		src, dst := h.src[off:off+h.spatial], h.dst[off:off+h.spatial]
		for i, v := range src {
			dst[i] = v / s
		}
	}
}

// forward computes the layer's forward pass on the host.
func (h *bnHost[T]) forward(l *batchNormLayer[T], bottom, top []*blob.Blob[T]) {
	if h.variance == nil {
		h.variance, h.normalize, h.sumX = h.varianceRows, h.normalizeRows, h.sumRows
	}
	d := device.Host[T](l.Context())
	n := bottom[0].Count()
	h.x, h.channels, h.spatial = bottom[0].CPUData(), l.channels, l.spatial
	h.mean, h.std = l.mean.MutableCPUData(), l.variance.MutableCPUData()
	if l.useGlobal {
		var f T
		if s := l.Blobs()[2].CPUData()[0]; s != 0 {
			f = 1 / s
		}
		d.Scale(l.channels, f, l.Blobs()[0].CPUData(), h.mean)
		d.Scale(l.channels, f, l.Blobs()[1].CPUData(), h.std)
	} else {
		// bnChannelSum's two gemv calls, the first a row at a time on
		// the cores, for the mean and then for the variance.
		h.rowSums, h.ones, h.alpha = l.numByChans.MutableCPUData(), l.spatialOne.CPUData(), 1/T(l.num*l.spatial)
		kit.UnitsParallel(n/h.spatial, h.spatial, h.sumX)
		d.Gemv(blas.Trans, l.num, l.channels, 1, h.rowSums, l.batchOnes.CPUData(), 0, h.mean)
		parts := mathfn.Parts(n / h.spatial)
		for len(h.squares) < parts {
			h.squares = append(h.squares, nil)
		}
		for p := range parts {
			h.squares[p] = kit.Grow(h.squares[p], h.spatial)
		}
		kit.UnitsParallel(n/h.spatial, h.spatial, h.variance)
		d.Gemv(blas.Trans, l.num, l.channels, 1, h.rowSums, l.batchOnes.CPUData(), 0, h.std)
		bnUpdateStatistics(l, d, n, h.mean, h.std)
	}
	d.AddScalar(l.channels, l.eps, h.std)
	d.Sqrt(l.channels, h.std, h.std)
	// x is read before y is written, element by element: in place works.
	h.y, h.xNorm = top[0].MutableCPUData(), l.xNorm.MutableCPUData()
	kit.UnitsParallel(n/h.spatial, h.spatial, h.normalize)
	h.x, h.y, h.xNorm, h.mean, h.std, h.rowSums, h.ones = nil, nil, nil, nil, nil, nil, nil
}

// sumRows sets rowSums[r] = alpha * sum(x) over rows [lo, hi): the
// first gemv of bnChannelSum, a row at a time through the same dot
// product.
func (h *bnHost[T]) sumRows(_, lo, hi int) {
	s := h.spatial
	for r := lo; r < hi; r++ {
		mathfn.Gemv(blas.NoTrans, 1, s, h.alpha, h.x[r*s:(r+1)*s], h.ones, 0, h.rowSums[r:r+1])
	}
}

// varianceRows sets rowSums[r] = alpha * sum((x - mean)^2) over rows
// [lo, hi), the squares in the part's row of scratch: the generic pass's
// gemv of its squares, a row at a time.
func (h *bnHost[T]) varianceRows(part, lo, hi int) {
	sq := h.squares[part][:h.spatial]
	for r := lo; r < hi; r++ {
		off, m := r*h.spatial, h.mean[r%h.channels]
		xs := h.x[off : off+h.spatial]
		for i := mathfn.BNSquaresPrefix(xs, sq, m); i < len(xs); i++ {
			c := xs[i] - m
			sq[i] = c * c
		}
		mathfn.Gemv(blas.NoTrans, 1, h.spatial, h.alpha, sq, h.ones, 0, h.rowSums[r:r+1])
	}
}

// normalizeRows sets y = xNorm = (x - mean) / std over rows [lo, hi).
// Caffe's temp, std broadcast, is not written: the host's backward pass
// divides by std itself (divideByStd).
func (h *bnHost[T]) normalizeRows(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		off, m, s := r*h.spatial, h.mean[r%h.channels], h.std[r%h.channels]
		xs, ys, xn := h.x[off:off+h.spatial], h.y[off:off+h.spatial], h.xNorm[off:off+h.spatial]
		for i := mathfn.BNNormalizePrefix(xs, ys, xn, m, s); i < len(xs); i++ {
			q := (xs[i] - m) / s
			ys[i], xn[i] = q, q
		}
	}
}
