package layer

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("Reduction", newReduction[float32], newReduction[float64]) }

// Reduction reduces all axes from reduction_param.axis (default 0: the
// whole blob to a scalar) by SUM, ASUM (sum of |x|), SUMSQ (sum of x^2) or
// MEAN, times coeff (default 1). The top's shape is the bottom's up to
// axis.
type Reduction[T Float] struct {
	Base[T]
	op       caffepb.ReductionParameter_ReductionOp
	coeff    T
	num, dim int
	shape    []int
}

func newReduction[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &Reduction[T]{}
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
func (*Reduction[T]) Type() string { return "Reduction" }

// Counts returns one bottom and one top.
func (*Reduction[T]) Counts() BlobCounts { return BlobCounts{Bottom: Exactly(1), Top: Exactly(1)} }

// LayerSetUp has nothing to do.
func (*Reduction[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top to the bottom's axes before axis.
func (l *Reduction[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := bottom[0].CanonicalAxisIndex(int(l.param.GetReductionParam().GetAxis()))
	if err != nil {
		return err
	}
	l.shape = append(l.shape[:0], bottom[0].Shape()[:axis]...)
	l.num, l.dim = bottom[0].CountRange(0, axis), bottom[0].CountFrom(axis)
	return top[0].Reshape(l.shape)
}

// scale is coeff, divided by dim for MEAN.
func (l *Reduction[T]) scale() T {
	if l.op == caffepb.ReductionParameter_MEAN && l.dim > 0 {
		return l.coeff / T(l.dim)
	}
	return l.coeff
}

// ForwardCPU reduces each of the num slices.
func (l *Reduction[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i := range l.num {
		var s T
		for _, v := range x[i*l.dim : (i+1)*l.dim] {
			switch l.op {
			case caffepb.ReductionParameter_ASUM:
				s += max(v, -v)
			case caffepb.ReductionParameter_SUMSQ:
				s += v * v
			default:
				s += v
			}
		}
		y[i] = s * l.scale()
	}
	return nil
}

// BackwardCPU spreads each slice's gradient: scale, scale*sign(x) or
// 2*scale*x.
func (l *Reduction[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x, dy, dx := bottom[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i := range l.num {
		g := dy[i] * l.scale()
		for j := i * l.dim; j < (i+1)*l.dim; j++ {
			switch l.op {
			case caffepb.ReductionParameter_ASUM:
				switch {
				case x[j] > 0:
					dx[j] = g
				case x[j] < 0:
					dx[j] = -g
				default:
					dx[j] = 0
				}
			case caffepb.ReductionParameter_SUMSQ:
				dx[j] = 2 * g * x[j]
			default:
				dx[j] = g
			}
		}
	}
	return nil
}
