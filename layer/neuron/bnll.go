package neuron

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "BNLL",
		New32: newBNLL[float32], New64: newBNLL[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newBNLLGPU[float32], newBNLLGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// bnllThreshold caps the exponent of the gradient's exp(x) (Caffe's
// kBNLL_THRESHOLD): beyond it exp(x) / (exp(x) + 1) is 1 in any precision,
// and exp would overflow a float.
const bnllThreshold = 50

// BNLL is the binomial normal log likelihood, softplus: y = log(1 +
// exp(x)), computed as x + log(1 + exp(-x)) for x > 0 so that exp never
// overflows. Run in place, it keeps a copy of x for the backward pass.
type bnllLayer[T layer.Float] struct {
	neuron[T]
	input bottomCopy[T]
}

func newBNLL[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &bnllLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "BNLL".
func (*bnllLayer[T]) Type() string { return "BNLL" }

// Reshape gives the top the bottom's shape and sizes the in-place copy.
func (l *bnllLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(bottom[0]); err != nil {
		return err
	}
	return l.input.reshape(&l.Base, bottom[0], top[0])
}

// ForwardCPU computes the softplus.
func (l *bnllLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if err := saveBottom(&l.input, device.HostView[T]{}, bottom[0], top[0]); err != nil {
		return err
	}
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		f := float64(v)
		if f > 0 {
			y[i] = T(f + math.Log1p(math.Exp(-f)))
		} else {
			y[i] = T(math.Log1p(math.Exp(f)))
		}
	}
	return nil
}

// BackwardCPU computes dx = dy * sigmoid(x) as e / (e + 1), e = exp(min(x,
// 50)).
func (l *bnllLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x := l.input.input(bottom[0], top[0]).CPUData()
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		e := math.Exp(min(float64(v), bnllThreshold))
		dx[i] = dy[i] * T(e/(e+1))
	}
	return nil
}
