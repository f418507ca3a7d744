package neuron

import (
	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:                   "ReLU",
		BackwardReads:          layer.Reads(layer.BackwardReadsBottom),
		BackwardReadsLaterData: true,
		New32:                  newReLU[float32], New64: newReLU[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName {
			return layer.EngineName(p.GetReluParam().GetEngine())
		},
		Engines:   []layer.EngineDef{layer.GPUEngine(newReLUGPU[float32], newReLUGPU[float64]), layer.CuDNNEngine(true, acceptsReLUDNN, newActivationDNN[float32, *reluLayer[float32]](cuda.ActivationReLU), newActivationDNN[float64, *reluLayer[float64]](cuda.ActivationReLU))},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// ReLU computes y = max(x, 0) + negative_slope * min(x, 0) (a leaky ReLU
// when negative_slope is not 0). It works in place.
type reluLayer[T layer.Float] struct {
	neuron[T]
	slope T
	pass  elementwise[T]
}

func newReLU[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &reluLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.slope = T(p.GetReluParam().GetNegativeSlope())
	l.pass.init(l.forwardRange, l.backwardRange)
	return l, nil
}

// Type returns "ReLU".
func (*reluLayer[T]) Type() string { return "ReLU" }

// ForwardCPU computes the activation: Caffe's CPU arithmetic,
// std::max(x, 0) + slope * std::min(x, 0), to the sign of zero.
func (l *reluLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.pass.forward(bottom[0].CPUData(), top[0].MutableCPUData())
	return nil
}

// forwardRange computes the forward pass over matching ranges of x and y.
func (l *reluLayer[T]) forwardRange(x, y []T) {
	if l.slope == 0 {
		mathfn.ReLUZero(x, y)
		return
	}
	for i, v := range x {
		// max(x, 0) is 0 and min(x, 0) x for x < 0 (+ 0 makes -0 +0);
		// otherwise max is x and min 0 of x's sign, so only -0 with a
		// negative slope changes: -0 + (+0).
		if v < 0 {
			v = v*l.slope + 0
		} else if v == 0 && l.slope < 0 {
			v = 0
		}
		y[i] = v
	}
}

// BackwardCPU computes Caffe's dx = dy * ((x > 0) + slope * (x <= 0)):
// dy where x > 0, dy * slope where x <= 0, and dy * 0 where x is NaN. The
// comparisons become numbers without a branch (one mispredicted about
// every other element on a convolution's output).
func (l *reluLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l.pass.backward(bottom[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff())
	return nil
}

// backwardRange computes the backward pass over matching ranges.
func (l *reluLayer[T]) backwardRange(x, dy, dx []T) {
	// The factor of each case, computed as the loop below computes it, for
	// the vector kernel (AVX2 where the CPU lacks AVX-512).
	pos := T(kit.Btoi(true)) + l.slope*T(kit.Btoi(false))
	neg := T(kit.Btoi(false)) + l.slope*T(kit.Btoi(true))
	nan := T(kit.Btoi(false)) + l.slope*T(kit.Btoi(false))
	done := mathfn.ReLUBackPrefix(x, dy, dx, pos, neg, nan)
	x, dy, dx = x[done:], dy[done:], dx[done:]
	for i, v := range x {
		dx[i] = dy[i] * (T(kit.Btoi(v > 0)) + l.slope*T(kit.Btoi(v <= 0)))
	}
}
