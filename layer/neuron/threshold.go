package neuron

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Threshold",
		New32: newThreshold[float32], New64: newThreshold[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newThresholdGPU[float32], newThresholdGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// errThresholdBackward is returned when a gradient is asked of Threshold,
// a step function with no useful one (Caffe: NOT_IMPLEMENTED).
var errThresholdBackward = errors.New("has no backward pass: the step function has no gradient; set propagate_down false for its bottom")

// Threshold computes y = x > threshold ? 1 : 0 (threshold_param, default
// 0). It works in place.
type thresholdLayer[T layer.Float] struct {
	neuron[T]
	threshold T
}

func newThreshold[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &thresholdLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.threshold = T(p.GetThresholdParam().GetThreshold())
	return l, nil
}

// Type returns "Threshold".
func (*thresholdLayer[T]) Type() string { return "Threshold" }

// ForwardCPU computes the step.
func (l *thresholdLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		if v > l.threshold {
			y[i] = 1
		} else {
			y[i] = 0
		}
	}
	return nil
}

// BackwardCPU fails if the bottom's gradient is asked for.
func (l *thresholdLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[0] {
		return errThresholdBackward
	}
	return nil
}
