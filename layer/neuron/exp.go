package neuron

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Exp",
		New32: newExp[float32], New64: newExp[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newExpGPU[float32], newExpGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Exp computes y = base^(shift + scale * x) (exp_param; base -1, the
// default, means e), as outer * exp(inner * x) with inner = ln(base) *
// scale and outer = base^shift. The gradient, inner * y, needs only the
// top, so it works in place.
type expLayer[T layer.Float] struct {
	neuron[T]
	inner, outer float64
}

// logBase checks a base of exp_param or log_param, which must be positive
// or -1 for e, and returns its natural logarithm.
func logBase(base float64, field string) (float64, error) {
	if base == -1 {
		return 1, nil
	}
	if !(base > 0) || math.IsInf(base, 1) {
		return 0, fmt.Errorf("%s.base must be positive, or -1 for e, got %v", field, base)
	}
	return math.Log(base), nil
}

func newExp[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &expLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ep := p.GetExpParam()
	base, scale, shift := float64(ep.GetBase()), float64(ep.GetScale()), float64(ep.GetShift())
	lb, err := logBase(base, "exp_param")
	if err != nil {
		return nil, err
	}
	l.inner, l.outer = lb*scale, 1
	switch {
	case shift == 0:
	case base == -1:
		l.outer = math.Exp(shift)
	default:
		l.outer = math.Pow(base, shift)
	}
	return l, nil
}

// Type returns "Exp".
func (*expLayer[T]) Type() string { return "Exp" }

// ForwardCPU computes outer * exp(inner * x).
func (l *expLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		y[i] = T(l.outer * math.Exp(l.inner*float64(v)))
	}
	return nil
}

// BackwardCPU computes dx = dy * y * inner.
func (l *expLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	y, dy, dx := top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	inner := T(l.inner)
	for i, v := range y {
		dx[i] = dy[i] * v * inner
	}
	return nil
}
