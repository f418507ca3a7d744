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
		Type:          "TanH",
		BackwardReads: layer.Reads(layer.BackwardReadsTop),
		New32:         newTanH[float32], New64: newTanH[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName {
			return layer.EngineName(p.GetTanhParam().GetEngine())
		},
		Engines:   []layer.EngineDef{layer.GPUEngine(newTanHGPU[float32], newTanHGPU[float64]), layer.CuDNNEngine(false, nil, newActivationDNN[float32, *tanhLayer[float32]](cuda.ActivationTanh), newActivationDNN[float64, *tanhLayer[float64]](cuda.ActivationTanh))},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// TanH computes y = tanh(x). The backward pass needs only the top's data,
// so it works in place.
type tanhLayer[T layer.Float] struct {
	neuron[T]
	pass elementwise[T]
}

func newTanH[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &tanhLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.pass.init(tanhForward[T], tanhBackward[T])
	return l, nil
}

// Type returns "TanH".
func (*tanhLayer[T]) Type() string { return "TanH" }

// ForwardCPU computes the hyperbolic tangent.
func (l *tanhLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.pass.forward(bottom[0].CPUData(), top[0].MutableCPUData())
	return nil
}

func tanhForward[T layer.Float](x, y []T) {
	for i, v := range x {
		y[i] = T(math.Tanh(float64(v)))
	}
}

// BackwardCPU computes dx = dy * (1 - y^2).
func (l *tanhLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l.pass.backward(top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff())
	return nil
}

func tanhBackward[T layer.Float](y, dy, dx []T) {
	for i, v := range y {
		dx[i] = dy[i] * (1 - v*v)
	}
}
