package neuron

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Swish",
		New32: newSwish[float32], New64: newSwish[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newSwishGPU[float32], newSwishGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Swish computes y = x * sigmoid(beta * x) (swish_param.beta, default 1).
type swishLayer[T layer.Float] struct {
	neuron[T]
	beta    T
	sig     []T           // sigmoid(beta * x), kept for the backward pass
	sigBlob *blob.Blob[T] // the same on the device (swish_cuda.go)
}

func newSwish[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &swishLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.beta = T(p.GetSwishParam().GetBeta())
	return l, nil
}

// Type returns "Swish".
func (*swishLayer[T]) Type() string { return "Swish" }

// ForwardCPU computes the activation.
func (l *swishLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	if cap(l.sig) < len(x) {
		l.sig = make([]T, len(x))
	}
	l.sig = l.sig[:len(x)]
	for i, v := range x {
		s := T(1 / (1 + math.Exp(-float64(l.beta*v))))
		l.sig[i] = s
		y[i] = v * s
	}
	return nil
}

// BackwardCPU computes dy * (beta*y + s*(1 - beta*y)), s the sigmoid.
func (l *swishLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	y, dy, dx := top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, s := range l.sig {
		dx[i] = dy[i] * (l.beta*y[i] + s*(1-l.beta*y[i]))
	}
	return nil
}
