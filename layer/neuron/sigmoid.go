package neuron

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Sigmoid",
		BackwardReads: layer.Reads(layer.BackwardReadsTop),
		New32:         newSigmoid[float32], New64: newSigmoid[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName {
			return layer.EngineName(p.GetSigmoidParam().GetEngine())
		},
		Engines:   []layer.EngineDef{layer.GPUEngine(newSigmoidGPU[float32], newSigmoidGPU[float64]), layer.CuDNNEngine(false, nil, newActivationDNN[float32, *sigmoidLayer[float32]](cuda.ActivationSigmoid), newActivationDNN[float64, *sigmoidLayer[float64]](cuda.ActivationSigmoid))},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Sigmoid computes y = 1 / (1 + exp(-x)). The backward pass needs only the
// top's data, so it works in place.
type sigmoidLayer[T layer.Float] struct {
	neuron[T]
	pass elementwise[T]
}

func newSigmoid[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &sigmoidLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.pass.init(sigmoidForward[T], sigmoidBackward[T])
	return l, nil
}

// Type returns "Sigmoid".
func (*sigmoidLayer[T]) Type() string { return "Sigmoid" }

// ForwardCPU computes the sigmoid as 0.5 * tanh(0.5 * x) + 0.5 (as Caffe
// does), which never overflows.
func (l *sigmoidLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.pass.forward(bottom[0].CPUData(), top[0].MutableCPUData())
	return nil
}

func sigmoidForward[T layer.Float](x, y []T) {
	for i, v := range x {
		y[i] = T(0.5*math.Tanh(0.5*float64(v)) + 0.5)
	}
}

// BackwardCPU computes dx = dy * y * (1 - y).
func (l *sigmoidLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l.pass.backward(top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff())
	return nil
}

func sigmoidBackward[T layer.Float](y, dy, dx []T) {
	for i, v := range y {
		dx[i] = dy[i] * v * (1 - v)
	}
}
