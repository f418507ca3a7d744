package layer

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("Clip", newClip[float32], newClip[float64]) }

// Clip computes y = max(min, min(max, x)) with clip_param's min and max
// (both required); the gradient passes where min <= x <= max.
type Clip[T Float] struct {
	neuron[T]
	lo, hi T
}

func newClip[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &Clip[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	cp := p.GetClipParam()
	if cp == nil || cp.Min == nil || cp.Max == nil {
		return nil, errors.New("clip_param needs both min and max")
	}
	if cp.GetMin() > cp.GetMax() {
		return nil, errors.New("clip_param: min must not be greater than max")
	}
	l.lo, l.hi = T(cp.GetMin()), T(cp.GetMax())
	return l, nil
}

// Type returns "Clip".
func (*Clip[T]) Type() string { return "Clip" }

// ForwardCPU clips.
func (l *Clip[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	y := top[0].MutableCPUData()
	for i, v := range bottom[0].CPUData() {
		y[i] = max(l.lo, min(l.hi, v))
	}
	return nil
}

// BackwardCPU passes the gradient inside [min, max].
func (l *Clip[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range bottom[0].CPUData() {
		if v >= l.lo && v <= l.hi {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
	return nil
}
