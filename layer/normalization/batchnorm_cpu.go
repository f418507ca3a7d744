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
// and the rest is two passes over rows (an image's channel) spread on
// the cores: y = x - mean and its square, whose row sum is taken while the
// row is in the cache; then y / std, kept in xNorm. The sums are the
// generic pass's gemv calls a row at a time (the same dot products). Each value is
// computed by the same operations as in the generic pass (a subtraction,
// a square, a division, rounded one by one), so the results are the
// same bit for bit. ResNet-50's BatchNorm forward at batch 4 on 2 cores:
// 58 ms through the generic pass against Caffe's 51.
type bnHost[T layer.Float] struct {
	x, y, temp, xNorm, mean, std []T
	rowSums, ones                []T // a row's sum each (numByChans), spatialOne
	alpha                        T   // 1/m, m the values of a channel
	channels, spatial            int
	squares                      bool
	// Method values, made once: a pass allocates nothing.
	center, normalize, divide, sumX func(part, lo, hi int)
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
	if h.center == nil {
		h.center, h.normalize, h.sumX = h.centerRows, h.normalizeRows, h.sumRows
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
		// the cores.
		h.rowSums, h.ones, h.alpha = l.numByChans.MutableCPUData(), l.spatialOne.CPUData(), 1/T(l.num*l.spatial)
		kit.UnitsParallel(n/h.spatial, h.spatial, h.sumX)
		d.Gemv(blas.Trans, l.num, l.channels, 1, h.rowSums, l.batchOnes.CPUData(), 0, h.mean)
	}
	// x is read before y is written, element by element: in place works.
	// With statistics each row's squares are summed while in the cache.
	h.y, h.temp, h.squares = top[0].MutableCPUData(), l.temp.MutableCPUData(), !l.useGlobal
	kit.UnitsParallel(n/h.spatial, h.spatial, h.center)
	if !l.useGlobal {
		d.Gemv(blas.Trans, l.num, l.channels, 1, h.rowSums, l.batchOnes.CPUData(), 0, h.std)
		bnUpdateStatistics(l, d, n, h.mean, h.std)
	}
	d.AddScalar(l.channels, l.eps, h.std)
	d.Sqrt(l.channels, h.std, h.std)
	h.xNorm = l.xNorm.MutableCPUData()
	kit.UnitsParallel(n/h.spatial, h.spatial, h.normalize)
	h.x, h.y, h.temp, h.xNorm, h.mean, h.std, h.rowSums, h.ones = nil, nil, nil, nil, nil, nil, nil, nil
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

// centerRows sets y = x - mean over rows [lo, hi), and temp = y*y when the
// pass computes statistics.
func (h *bnHost[T]) centerRows(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		off, m := r*h.spatial, h.mean[r%h.channels]
		xs, ys := h.x[off:off+h.spatial], h.y[off:off+h.spatial]
		if !h.squares {
			for i, v := range xs {
				ys[i] = v - m
			}
			continue
		}
		sq := h.temp[off : off+h.spatial]
		for i, v := range xs {
			c := v - m
			ys[i], sq[i] = c, c*c
		}
		mathfn.Gemv(blas.NoTrans, 1, h.spatial, h.alpha, sq, h.ones, 0, h.rowSums[r:r+1])
	}
}

// normalizeRows sets y = xNorm = y / std over rows [lo, hi). Caffe's
// temp, std broadcast, is not written: the host's backward pass divides
// by std itself (divideByStd).
func (h *bnHost[T]) normalizeRows(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		off, s := r*h.spatial, h.std[r%h.channels]
		ys, xn := h.y[off:off+h.spatial], h.xNorm[off:off+h.spatial]
		for i, v := range ys {
			q := v / s
			ys[i], xn[i] = q, q
		}
	}
}
