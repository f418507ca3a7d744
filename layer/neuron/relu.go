package neuron

import (
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "ReLU",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newReLU[float32], New64: newReLU[float64],
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
		reluZeroSlope(x, y)
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

// reluZeroSlope is the forward pass with slope 0: y = +0 where x < 0 is
// finite, NaN for -Inf (0 * -Inf), x elsewhere (-0 and NaN included),
// decided on the bits without a data-dependent branch
// (one comparison of floats mispredicted about every other element on a
// convolution's output: CIFAR-10 quick's relu1 took 0.8 ms, Caffe's 0.5).
func reluZeroSlope[T layer.Float](x, y []T) {
	done := mathfn.ReLUPrefix(x, y) // AVX-512 where the CPU has it
	x, y = x[done:], y[done:len(x)]
	if len(x) == 0 {
		return
	}
	data, out := unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y))
	if unsafe.Sizeof(x[0]) == 4 {
		reluBits(unsafe.Slice((*uint32)(data), len(x)), unsafe.Slice((*uint32)(out), len(y)), 0x7f800000, 0xffc00000)
	} else {
		reluBits(unsafe.Slice((*uint64)(data), len(x)), unsafe.Slice((*uint64)(out), len(y)), 0x7ff0000000000000, 0xfff8000000000000)
	}
}

// reluBits clears the values whose bits are those of a finite negative
// number: the sign set, and a magnitude above zero and below inf's (not
// -0, not a NaN). -Inf becomes the x86 default NaN, nan, as Caffe's 0 *
// min(-Inf, 0) makes it.
func reluBits[U uint32 | uint64](x, y []U, inf, nan U) {
	y = y[:len(x)]
	shift := 8*unsafe.Sizeof(inf) - 1
	negInf := inf | 1<<shift
	for i, b := range x {
		mag := b &^ (1 << shift)
		var negative U
		if mag-1 < inf-1 { // wraps for 0
			negative = b >> shift
		}
		b &^= -negative
		if b == negInf {
			b = nan
		}
		y[i] = b
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
