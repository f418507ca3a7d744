package utility

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Reduction",
		New32: newReduction[float32], New64: newReduction[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newReductionGPU[float32], newReductionGPU[float64])},
		ONNX:    layer.ONNXConverted,
	})
}

// Reduction reduces all axes from reduction_param.axis (default 0: the
// whole blob to a scalar) by SUM, ASUM (sum of |x|), SUMSQ (sum of x^2) or
// MEAN, times coeff (default 1). The top's shape is the bottom's up to
// axis.
type reductionLayer[T layer.Float] struct {
	layer.Base[T]
	op       caffepb.ReductionParameter_ReductionOp
	coeff    T
	num, dim int
	shape    []int
	ones     *blob.Blob[T]
}

func newReduction[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &reductionLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	rp := p.GetReductionParam()
	l.op, l.coeff = rp.GetOperation(), T(rp.GetCoeff())
	switch l.op {
	case caffepb.ReductionParameter_SUM, caffepb.ReductionParameter_ASUM, caffepb.ReductionParameter_SUMSQ, caffepb.ReductionParameter_MEAN:
	default:
		return nil, fmt.Errorf("unknown reduction operation %v", l.op)
	}
	return l, nil
}

// Type returns "Reduction".
func (*reductionLayer[T]) Type() string { return "Reduction" }

// Counts returns one bottom and one top.
func (*reductionLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do.
func (*reductionLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top to the bottom's axes before axis.
func (l *reductionLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := bottom[0].CanonicalAxisIndex(int(l.Param().GetReductionParam().GetAxis()))
	if err != nil {
		return err
	}
	l.shape = append(l.shape[:0], bottom[0].Shape()[:axis]...)
	l.num, l.dim = bottom[0].CountRange(0, axis), bottom[0].CountFrom(axis)
	return top[0].Reshape(l.shape)
}

// scale is coeff, divided by dim for MEAN.
func (l *reductionLayer[T]) scale() T {
	if l.op == caffepb.ReductionParameter_MEAN && l.dim > 0 {
		return l.coeff / T(l.dim)
	}
	return l.coeff
}

// ForwardCPU reduces each of the num slices on the host.
func (l *reductionLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return reductionForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU spreads each slice's gradient on the host.
func (l *reductionLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return reductionBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

// reductionForward reduces slice by slice, as Caffe's: a dot product with
// ones (SUM, MEAN), with itself (SUMSQ) or an asum, scaled.
func reductionForward[T layer.Float, A any](l *reductionLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	if err := kit.Ones(l, &l.ones, max(l.dim, 1)); err != nil {
		return err
	}
	x, y, ones := d.Data(bottom[0]), d.MutableData(top[0]), d.Data(l.ones)
	for i := range l.num {
		xi := d.Offset(x, i*l.dim)
		var s T
		switch l.op {
		case caffepb.ReductionParameter_ASUM:
			s = d.Asum(l.dim, xi)
		case caffepb.ReductionParameter_SUMSQ:
			s = d.Dot(l.dim, xi, xi)
		default:
			s = d.Dot(l.dim, xi, ones)
		}
		d.Set(1, s*l.scale(), d.Offset(y, i))
	}
	return d.Err()
}

// reductionBackward writes each slice's gradient: scale, scale*sign(x) or
// 2*scale*x, times the top's gradient (read on the host, as Caffe does).
func reductionBackward[T layer.Float, A any](l *reductionLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dy := top[0].CPUDiff()
	x, dx := d.Data(bottom[0]), d.MutableDiff(bottom[0])
	for i := range l.num {
		g := dy[i] * l.scale()
		xi, dxi := d.Offset(x, i*l.dim), d.Offset(dx, i*l.dim)
		switch l.op {
		case caffepb.ReductionParameter_ASUM:
			d.Sign(l.dim, xi, dxi)
			d.Scal(l.dim, g, dxi)
		case caffepb.ReductionParameter_SUMSQ:
			d.Scale(l.dim, 2*g, xi, dxi)
		default:
			d.Set(l.dim, g, dxi)
		}
	}
	return d.Err()
}
