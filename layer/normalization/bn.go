package normalization

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "BN",
		New32: newBN[float32], New64: newBN[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newBNGPU[float32], newBNGPU[float64])},
		ONNXWhy:  "gocaffe writes no ONNX form of it",
		NoGolden: "BVLC Caffe has no such layer: it is TSN's and SegNet's",
	})
}

// BN is the batch normalization of TSN's Caffe (yjxiong/caffe; bn_param),
// which BN-Inception models use: y = slope * (x - mean) / sqrt(var + eps)
// + bias per channel, with its own learned slope and bias (BVLC's
// BatchNorm needs a Scale after it). Its four blobs are 1 x C: slope, bias,
// the running mean and the running variance. Training uses the batch's
// mean and biased variance and folds them into the running ones,
// running = (1 - momentum) * batch + momentum * running; TEST, or
// frozen: true, uses the running ones. The running statistics never get a
// learning rate, nor do the slope and bias when frozen (their ParamSpecs are
// set so, as TSN's layer does).
type bnLayer[T layer.Float] struct {
	layer.Base[T]
	frozen        bool
	momentum, eps T
	num, channels int
	spatial       int
	xNorm, invStd []T // saved by the forward pass for backward
}

// bnBlobs is how many blobs BN keeps.
const bnBlobs = 4

func newBN[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &bnLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	bp := l.Param().GetBnParam()
	l.frozen, l.momentum, l.eps = bp.GetFrozen(), T(bp.GetMomentum()), T(bp.GetEps())
	for len(l.Param().Param) < bnBlobs {
		l.Param().Param = append(l.Param().Param, &caffepb.ParamSpec{})
	}
	for i, ps := range l.Param().Param[:bnBlobs] {
		if i >= 2 || l.frozen {
			ps.LrMult, ps.DecayMult = proto.Float32(0), proto.Float32(0)
		}
	}
	return l, nil
}

// Type returns "BN".
func (*bnLayer[T]) Type() string { return "BN" }

// Counts: one bottom, one top.
func (*bnLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// useRunning says whether this pass normalizes with the running statistics.
func (l *bnLayer[T]) useRunning() bool { return l.frozen || l.Phase() == caffepb.Phase_TEST }

// LayerSetUp creates the four blobs (slope and bias by their fillers, the
// running mean 0 and the running variance 0, or 1 when frozen, as TSN), or
// checks the loaded ones. The blobs with no learning rate get no gradient
// (a net would decide the same from the ParamSpecs).
func (l *bnLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	defer func() {
		for i := range l.Blobs() {
			if i >= 2 || l.frozen {
				l.SetParamPropagateDown(i, false)
			}
		}
	}()
	if bottom[0].NumAxes() < 2 {
		return fmt.Errorf("bottom %s needs a channel axis", bottom[0].ShapeString())
	}
	c := bottom[0].Shape()[1]
	if len(l.Blobs()) > 0 {
		if len(l.Blobs()) != bnBlobs {
			return fmt.Errorf("%d blobs, want %d (slope, bias, running mean, running variance)", len(l.Blobs()), bnBlobs)
		}
		for i, b := range l.Blobs() {
			if b.Count() != c {
				return fmt.Errorf("blob %d holds %d values for %d channels", i, b.Count(), c)
			}
		}
		return nil
	}
	bp := l.Param().GetBnParam()
	for i, fp := range []*caffepb.FillerParameter{bp.GetSlopeFiller(), bp.GetBiasFiller(), nil, nil} {
		if fp == nil {
			v := float32(0)
			if i == 3 && l.frozen {
				v = 1
			}
			fp = &caffepb.FillerParameter{Type: proto.String("constant"), Value: proto.Float32(v)}
		}
		b, err := l.NewParamBlob(fp, 1, c)
		if err != nil {
			return fmt.Errorf("blob %d filler: %w", i, err)
		}
		l.AddBlob(b)
	}
	return nil
}

// Reshape gives the top the bottom's shape and sizes the saved values.
func (l *bnLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() < 2 || b.Shape()[1] != l.Blobs()[0].Count() {
		return fmt.Errorf("bottom %s must have the %d channels of the layer's blobs", b.ShapeString(), l.Blobs()[0].Count())
	}
	l.num, l.channels, l.spatial = b.Shape()[0], b.Shape()[1], b.CountFrom(2)
	l.xNorm = kit.Grow(l.xNorm, b.Count())
	l.invStd = kit.Grow(l.invStd, l.channels)
	return top[0].ReshapeLike(b)
}

// each calls f(c, i) for every element i of channel c.
func (l *bnLayer[T]) each(c int, f func(i int)) {
	for n := range l.num {
		base := (n*l.channels + c) * l.spatial
		for i := base; i < base+l.spatial; i++ {
			f(i)
		}
	}
}

// ForwardCPU normalizes, scales and shifts.
func (l *bnLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	slope, bias := l.Blobs()[0].CPUData(), l.Blobs()[1].CPUData()
	running := !l.useRunning()
	m := T(l.num * l.spatial)
	for c := range l.channels {
		mean, variance := l.Blobs()[2].CPUData()[c], l.Blobs()[3].CPUData()[c]
		if running {
			var sum, sq T
			l.each(c, func(i int) { sum += x[i] })
			mean = sum / m
			l.each(c, func(i int) { d := x[i] - mean; sq += d * d })
			variance = sq / m
			rm, rv := l.Blobs()[2].MutableCPUData(), l.Blobs()[3].MutableCPUData()
			rm[c] = (1-l.momentum)*mean + l.momentum*rm[c]
			rv[c] = (1-l.momentum)*variance + l.momentum*rv[c]
		}
		inv := T(1 / math.Sqrt(float64(variance+l.eps)))
		l.invStd[c] = inv
		l.each(c, func(i int) {
			xn := (x[i] - mean) * inv
			l.xNorm[i] = xn
			y[i] = slope[c]*xn + bias[c]
		})
	}
	return nil
}

// BackwardCPU: with the batch's statistics, dslope = sum(dy * x_norm),
// dbias = sum(dy) and dx = slope/std * (dy - mean(dy) - x_norm *
// mean(dy * x_norm)); with the running ones (frozen), dx = slope/std * dy.
func (l *bnLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	dy := top[0].CPUDiff()
	slope := l.Blobs()[0].CPUData()
	var dx []T
	if propagateDown[0] {
		dx = bottom[0].MutableCPUDiff()
	}
	m := T(l.num * l.spatial)
	for c := range l.channels {
		k := slope[c] * l.invStd[c]
		if l.useRunning() {
			if dx != nil {
				l.each(c, func(i int) { dx[i] = k * dy[i] })
			}
			continue
		}
		var sumDy, sumDyX T
		l.each(c, func(i int) { sumDy += dy[i]; sumDyX += dy[i] * l.xNorm[i] })
		if l.ParamPropagateDown(0) {
			l.Blobs()[0].MutableCPUDiff()[c] += sumDyX
		}
		if l.ParamPropagateDown(1) {
			l.Blobs()[1].MutableCPUDiff()[c] += sumDy
		}
		if dx != nil {
			l.each(c, func(i int) { dx[i] = k * (dy[i] - sumDy/m - l.xNorm[i]*sumDyX/m) })
		}
	}
	return nil
}
