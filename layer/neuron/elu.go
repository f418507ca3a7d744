package neuron

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "ELU",
		New32: newELU[float32], New64: newELU[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newELUGPU[float32], newELUGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// ELU is the exponential linear unit: y = x > 0 ? x : alpha * (exp(x) - 1),
// alpha from elu_param (default 1). It works in place: as in Caffe the
// gradient, alpha + y for x <= 0, comes from the top's data, and the sign
// test on the overwritten bottom still holds since y <= 0 exactly where
// x <= 0 (for alpha >= 0).
type eluLayer[T layer.Float] struct {
	neuron[T]
	alpha T
}

func newELU[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &eluLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.alpha = T(p.GetEluParam().GetAlpha())
	return l, nil
}

// Type returns "ELU".
func (*eluLayer[T]) Type() string { return "ELU" }

// ForwardCPU computes the activation; expm1 keeps small negative inputs
// accurate.
func (l *eluLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = l.alpha * T(math.Expm1(float64(v)))
		}
	}
	return nil
}

// BackwardCPU passes the gradient where x > 0 and scales it by y + alpha
// elsewhere.
func (l *eluLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x, y, dy, dx := bottom[0].CPUData(), top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = dy[i] * (y[i] + l.alpha)
		}
	}
	return nil
}
