package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "MVN",
		New32: newMVN[float32], New64: newMVN[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newMVNGPU[float32], newMVNGPU[float64])},
		InPlace: true,
		ONNX:    layer.ONNXConverted,
	})
}

// MVN normalises each item's channels (or, with across_channels, each
// item) to mean 0 and, with normalize_variance (the default), to unit
// variance: y = (x - mean) / (sqrt(var) + eps), eps default 1e-9 (Caffe's
// MVNLayer; the blob is read as num x channels x ...).
type mvnLayer[T layer.Float] struct {
	layer.Base[T]
	normVar, across bool
	eps             T
	num, dim        int
	// Per slice: mean (and scratch), sqrt(var) + eps, a gradient sum; per
	// element: scratch; and a ones vector of a slice's length.
	mean, std, sum, temp, ones *blob.Blob[T]
}

func newMVN[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &mvnLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	mp := p.GetMvnParam()
	l.normVar, l.across, l.eps = mp.GetNormalizeVariance(), mp.GetAcrossChannels(), T(mp.GetEps())
	return l, nil
}

// Type returns "MVN".
func (*mvnLayer[T]) Type() string { return "MVN" }

// Counts returns one bottom and one top.
func (*mvnLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp creates the buffers.
func (l *mvnLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	for _, b := range []**blob.Blob[T]{&l.mean, &l.std, &l.sum, &l.temp} {
		nb, err := l.NewBlob()
		if err != nil {
			return err
		}
		*b = nb
	}
	return nil
}

// Reshape gives the top the bottom's shape and works out the slices.
func (l *mvnLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() > 4 || b.NumAxes() < 1 {
		return fmt.Errorf("MVN takes blobs of 1 to 4 axes (Caffe's legacy num x channels x height x width), got %s", b.ShapeString())
	}
	l.num = b.Shape()[0]
	if !l.across && b.NumAxes() > 1 {
		l.num *= b.Shape()[1]
	}
	l.dim = 0
	if l.num > 0 {
		l.dim = b.Count() / l.num
	}
	for _, s := range []*blob.Blob[T]{l.mean, l.std, l.sum} {
		if err := s.Reshape([]int{l.num}); err != nil {
			return err
		}
	}
	if err := l.temp.ReshapeLike(b); err != nil {
		return err
	}
	if err := kit.Ones(l, &l.ones, max(l.dim, 1)); err != nil {
		return err
	}
	return top[0].ReshapeLike(b)
}

// ForwardCPU normalises on the host.
func (l *mvnLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return mvnForward[T](l, device.Host[T](l.Context()), bottom, top)
}

// BackwardCPU computes the gradient on the host.
func (l *mvnLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return mvnBackward[T](l, device.Host[T](l.Context()), top, propagateDown, bottom)
}

// mvnForward is Caffe's MVNLayer::Forward with row sums by a ones vector:
// y = x - mean, then with normalize_variance y /= sqrt(mean(y^2)) + eps.
func mvnForward[T layer.Float, A any](l *mvnLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	n, dim, count := l.num, l.dim, bottom[0].Count()
	x, y, ones := d.Data(bottom[0]), d.MutableData(top[0]), d.Data(l.ones)
	mean, temp := d.MutableData(l.mean), d.MutableData(l.temp)
	d.Gemv(blas.NoTrans, n, dim, 1/T(dim), x, ones, 0, mean)
	d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, -1, mean, ones, 0, temp)
	d.Add(count, x, temp, y)
	if l.normVar {
		std := d.MutableData(l.std)
		d.Sqr(count, y, temp)
		d.Gemv(blas.NoTrans, n, dim, 1/T(dim), temp, ones, 0, std)
		d.Sqrt(n, std, std)
		d.AddScalar(n, l.eps, std)
		d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, 1, std, ones, 0, temp)
		d.Div(count, y, temp, y)
	}
	return d.Err()
}

// mvnBackward: with variance normalisation
// dx = (dy - mean(dy) - y*mean(dy*y)) / std, else dx = dy - mean(dy). The
// sums of dy are taken before dx is written, so it works in place.
func mvnBackward[T layer.Float, A any](l *mvnLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	n, dim, count := l.num, l.dim, bottom[0].Count()
	y, dy, dx, ones := d.Data(top[0]), d.Diff(top[0]), d.MutableDiff(bottom[0]), d.Data(l.ones)
	temp, mean, sum := d.MutableData(l.temp), d.MutableData(l.mean), d.MutableData(l.sum)
	if !l.normVar {
		d.Gemv(blas.NoTrans, n, dim, 1/T(dim), dy, ones, 0, mean)
		d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, -1, mean, ones, 0, temp)
		d.Add(count, dy, temp, dx)
		return d.Err()
	}
	d.Gemv(blas.NoTrans, n, dim, 1, dy, ones, 0, sum)
	d.Mul(count, y, dy, temp)
	d.Gemv(blas.NoTrans, n, dim, 1, temp, ones, 0, mean)
	d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, 1, mean, ones, 0, temp)
	d.Mul(count, y, temp, temp)
	d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, 1, sum, ones, 1, temp)
	d.Axpby(count, 1, dy, -1/T(dim), temp)
	d.Gemm(blas.NoTrans, blas.NoTrans, n, dim, 1, 1, d.Data(l.std), ones, 0, dx)
	d.Div(count, temp, dx, dx)
	return d.Err()
}
