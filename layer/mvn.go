package layer

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("MVN", newMVN[float32], newMVN[float64]) }

// MVN normalises each item's channels (or, with across_channels, each
// item) to mean 0 and, with normalize_variance (the default), to unit
// variance: y = (x - mean) / (sqrt(var) + eps), eps default 1e-9 (Caffe's
// MVNLayer; the blob is read as num x channels x ...).
type MVN[T Float] struct {
	Base[T]
	normVar, across bool
	eps             float64
	std             []T // per slice: sqrt(var) + eps
	num, dim        int
}

func newMVN[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &MVN[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	mp := p.GetMvnParam()
	l.normVar, l.across, l.eps = mp.GetNormalizeVariance(), mp.GetAcrossChannels(), float64(mp.GetEps())
	return l, nil
}

// Type returns "MVN".
func (*MVN[T]) Type() string { return "MVN" }

// Counts returns one bottom and one top.
func (*MVN[T]) Counts() BlobCounts { return BlobCounts{Bottom: Exactly(1), Top: Exactly(1)} }

// LayerSetUp has nothing to do.
func (*MVN[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape gives the top the bottom's shape and works out the slices.
func (l *MVN[T]) Reshape(bottom, top []*blob.Blob[T]) error {
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
	if cap(l.std) < l.num {
		l.std = make([]T, l.num)
	}
	l.std = l.std[:l.num]
	return top[0].ReshapeLike(b)
}

// ForwardCPU normalises each slice.
func (l *MVN[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i := range l.num {
		xs, ys := x[i*l.dim:(i+1)*l.dim], y[i*l.dim:(i+1)*l.dim]
		var mean float64
		for _, v := range xs {
			mean += float64(v)
		}
		mean /= float64(l.dim)
		var variance float64
		for j, v := range xs {
			d := float64(v) - mean
			ys[j] = T(d)
			variance += d * d
		}
		if !l.normVar {
			continue
		}
		l.std[i] = T(math.Sqrt(variance/float64(l.dim)) + l.eps)
		for j := range ys {
			ys[j] /= l.std[i]
		}
	}
	return nil
}

// BackwardCPU: with variance normalisation dx = (dy - mean(dy) -
// y*mean(dy*y)) / std, else dx = dy - mean(dy).
func (l *MVN[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	y, dy, dx := top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	n := float64(l.dim)
	for i := range l.num {
		ys, dys, dxs := y[i*l.dim:(i+1)*l.dim], dy[i*l.dim:(i+1)*l.dim], dx[i*l.dim:(i+1)*l.dim]
		var sumDy, sumDyY float64
		for j, g := range dys {
			sumDy += float64(g)
			sumDyY += float64(g) * float64(ys[j])
		}
		for j, g := range dys {
			if l.normVar {
				dxs[j] = T((float64(g) - sumDy/n - float64(ys[j])*sumDyY/n) / float64(l.std[i]))
			} else {
				dxs[j] = T(float64(g) - sumDy/n)
			}
		}
	}
	return nil
}
