package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("ReLU", newReLU[float32], newReLU[float64]) }

// ReLU computes y = max(x, 0) + negative_slope * min(x, 0) (a leaky ReLU
// when negative_slope is not 0). It works in place.
type ReLU[T Float] struct {
	neuron[T]
	slope T
}

func newReLU[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &ReLU[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.slope = T(p.GetReluParam().GetNegativeSlope())
	return l, nil
}

// Type returns "ReLU".
func (*ReLU[T]) Type() string { return "ReLU" }

// ForwardCPU computes the activation.
func (l *ReLU[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	y = y[:len(x)]
	for i, v := range x {
		// Caffe's max(x, 0) + slope*min(x, 0) with one comparison (NaN
		// stays NaN; + 0 makes a negative x times slope 0 +0, as there).
		if !(v > 0) {
			v = v*l.slope + 0
		}
		y[i] = v
	}
	return nil
}

// BackwardCPU passes the gradient where x > 0 and scales it by
// negative_slope elsewhere.
func (l *ReLU[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x, dy, dx := bottom[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	dy, dx = dy[:len(x)], dx[:len(x)]
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = dy[i] * l.slope
		}
	}
	return nil
}
