package layer

import (
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("TanH", newTanH[float32], newTanH[float64]) }

// TanH computes y = tanh(x). The backward pass needs only the top's data,
// so it works in place.
type TanH[T Float] struct{ neuron[T] }

func newTanH[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &TanH[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "TanH".
func (*TanH[T]) Type() string { return "TanH" }

// ForwardCPU computes the hyperbolic tangent.
func (l *TanH[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		y[i] = T(math.Tanh(float64(v)))
	}
	return nil
}

// BackwardCPU computes dx = dy * (1 - y^2).
func (l *TanH[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	y, dy, dx := top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range y {
		dx[i] = dy[i] * (1 - v*v)
	}
	return nil
}
