package neuron

import (
	"errors"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Log",
		New32: newLog[float32], New64: newLog[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newLogGPU[float32], newLogGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Log computes y = log_base(shift + scale * x) (log_param; base -1, the
// default, means e). Run in place, it keeps a copy of x for the backward
// pass.
type logLayer[T layer.Float] struct {
	neuron[T]
	scale, shift float64
	// baseScale is 1 / ln(base); backScale is scale / ln(base), the
	// gradient's numerator.
	baseScale, backScale float64
	input                bottomCopy[T]
}

func newLog[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &logLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	lp := p.GetLogParam()
	lb, err := logBase(float64(lp.GetBase()), "log_param")
	if err != nil {
		return nil, err
	}
	if lb == 0 {
		return nil, errors.New("log_param.base must not be 1: there is no logarithm to base 1")
	}
	l.scale, l.shift = float64(lp.GetScale()), float64(lp.GetShift())
	l.baseScale, l.backScale = 1/lb, l.scale/lb
	return l, nil
}

// Type returns "Log".
func (*logLayer[T]) Type() string { return "Log" }

// Reshape gives the top the bottom's shape and sizes the in-place copy.
func (l *logLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(bottom[0]); err != nil {
		return err
	}
	return l.input.reshape(&l.Base, bottom[0], top[0])
}

// ForwardCPU computes the logarithm.
func (l *logLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if err := saveBottom(&l.input, device.HostView[T]{}, bottom[0], top[0]); err != nil {
		return err
	}
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		y[i] = T(math.Log(l.shift+l.scale*float64(v)) * l.baseScale)
	}
	return nil
}

// BackwardCPU computes dx = dy * scale / (ln(base) * (shift + scale * x)).
func (l *logLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x := l.input.input(bottom[0], top[0]).CPUData()
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		dx[i] = dy[i] * T(l.backScale/(l.shift+l.scale*float64(v)))
	}
	return nil
}
