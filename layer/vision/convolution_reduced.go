package vision

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The cuDNN convolution in a 16-bit type (layer.ReducedEngine): x, y and
// the weights' copy in FLOAT16 or BFLOAT16, products summed in FP32 on
// tensor cores, the bias added and its gradient summed in FP32, the weight
// gradient added to the FP32 diff. A pass of a 1x1 convolution may take
// the pointwise way in 16 bits where it times faster (convolution_ways.go);
// no ReLU rides in the bias addition.

// SetReduced makes the engine convolve in s (StorageNative: in T again).
func (e *convolutionDNN[T]) SetReduced(s syncedmem.Storage) error {
	l := e.l
	if e.relu != nil {
		return errors.New("a ReLU is fused into the bias addition")
	}
	var red kit.Reduced[T]
	if err := red.SetReduced(l.Context(), s); err != nil {
		return err
	}
	typ, tensorOps := kit.DNNType[T](), l.Context().TF32()
	if red.On() {
		typ, tensorOps = red.DNNType(), true
	}
	fd := append([]int{l.numOutput, l.channels / l.group}, spatial2(l.kernel, 1)...)
	w, err := cuda.NewFilterDescIn(typ, e.layout(), fd)
	if err != nil {
		return err
	}
	// The products sum in T (FP32) in either case.
	conv, err := cuda.NewConvDesc(kit.DNNType[T](), spatial2(l.pad, 0), spatial2(l.stride, 1), spatial2(l.dilation, 1), l.group, tensorOps)
	if err != nil {
		w.Destroy()
		return err
	}
	if err := red.SetChannelsLast(e.red.ChannelsLast() && red.On()); err != nil {
		w.Destroy()
		conv.Destroy()
		return err
	}
	e.w.Destroy()
	e.conv.Destroy()
	e.w, e.conv, e.red = w, conv, red
	e.use = [3]bool{}
	e.way = nil             // a way of the new type and order
	e.x.Dims = e.x.Dims[:0] // the next Reshaped describes and chooses again
	return nil
}

// layout is the order of the engine's x, y and weights: channels-last
// where it computes so (SetChannelsLast).
func (e *convolutionDNN[T]) layout() cuda.Layout {
	if e.red.ChannelsLast() {
		return cuda.LayoutNHWC
	}
	return cuda.LayoutNCHW
}

// AcceptsChannelsLast: cuDNN convolves channels-last tensors in 16 bits
// (layer.ChannelsLastEngine), grouped ones included, the bias added over
// the channels of each position and its gradient summed by cuBLAS
// (biasGradientChannelsLast); the lowered way of few channels and the
// depthwise kernels have channels-last twins, timed against cuDNN's as
// row-major. A depthwise convolution the _cl8 kernels do not take
// (channels not in eights, more than 9 taps) stays row-major on the
// row-major ones: cuDNN's grouped algorithms are slow on it either way.
func (e *convolutionDNN[T]) AcceptsChannelsLast() bool {
	l := &e.l.convBase
	return e.red.On() && l.numSpatial == 2 && (!depthwiseApplies(l) || depthwiseChannelsLast(l))
}

// SetChannelsLast makes the engine convolve channels-last tensors with
// channels-last weights (output, kernel rows, columns, input of the
// group), through cuDNN alone; the next Reshape describes and chooses
// anew.
func (e *convolutionDNN[T]) SetChannelsLast(on bool) error {
	if on && !e.AcceptsChannelsLast() {
		return errors.New("channels-last needs 16 bits, two spatial axes, and a depthwise convolution's channels in eights and at most 9 taps")
	}
	if err := e.red.SetChannelsLast(on); err != nil {
		return err
	}
	return e.SetReduced(e.red.Storage()) // the filter descriptor in the new order
}

// tensorType is the cuDNN type of the engine's x and y.
func (e *convolutionDNN[T]) tensorType() cuda.DNNType {
	if e.red.On() {
		return e.red.DNNType()
	}
	return kit.DNNType[T]()
}

// forwardReduced convolves each bottom and adds the bias.
func (e *convolutionDNN[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	r := &e.red
	ws, err := e.workspace(e.fwdWS, e.forwardWorkspace())
	if err != nil {
		return err
	}
	w, err := r.Weights(g, l.Blobs()[0])
	if err != nil {
		return err
	}
	for i := range bottom {
		r.Begin()
		x, err := r.In(g, bottom[i], false)
		if err != nil {
			return err
		}
		y, err := r.Out(g, top[i], false)
		if err != nil {
			return err
		}
		if e.use[passForward] {
			if err := e.way.forward(&l.convBase, g, x, w, y, ws); err != nil {
				return err
			}
		} else if err := e.withFallback("forward", &e.fwd, func(a cuda.ConvAlgo) error {
			return e.dnn.ConvForward(1, e.x.Desc, x, e.w, w, e.conv, a, ws, 0, e.y.Desc, y)
		}); err != nil {
			return err
		}
		if l.biasTerm {
			if err := r.AddBias(top[i].Count(), l.numOutput, l.convOutSpatial, y, g.Data(l.Blobs()[1])); err != nil {
				return err
			}
		}
		if err := r.Done(g, top[i], false); err != nil {
			return err
		}
	}
	return g.Err()
}

// backwardReduced adds the bias and weight gradients to the FP32 diffs and
// computes the bottoms' where asked.
func (e *convolutionDNN[T]) backwardReduced(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	r := &e.red
	ws, err := e.workspace(e.bwdWS, e.backwardWorkspace())
	if err != nil {
		return err
	}
	weights := l.Blobs()[0]
	for i := range top {
		r.Begin()
		dy, err := r.In(g, top[i], true)
		if err != nil {
			return err
		}
		if l.biasTerm && l.ParamPropagateDown(1) {
			if r.ChannelsLast() {
				e.biasGradientChannelsLast(g, dy, ws)
			} else if err := r.AddBiasGradient(l.num, l.numOutput, l.convOutSpatial, dy, g.MutableDiff(l.Blobs()[1])); err != nil {
				return err
			}
		}
		if l.ParamPropagateDown(0) {
			if err := e.weightGradientReduced(g, bottom[i], dy, ws); err != nil {
				return err
			}
		}
		if !propagateDown[i] {
			continue
		}
		w, err := r.Weights(g, weights)
		if err != nil {
			return err
		}
		dx, err := r.Out(g, bottom[i], true)
		if err != nil {
			return err
		}
		if e.use[passBackwardData] {
			if err := e.way.backwardData(&l.convBase, g, w, dy, dx, ws); err != nil {
				return err
			}
		} else if err := e.withFallback("data gradient", &e.bwdData, func(a cuda.ConvAlgo) error {
			return e.dnn.ConvBackwardData(1, e.w, w, e.y.Desc, dy, e.conv, a, ws, 0, e.x.Desc, dx)
		}); err != nil {
			return err
		}
		if err := r.Done(g, bottom[i], true); err != nil {
			return err
		}
	}
	return g.Err()
}

// weightGradientReduced computes one bottom's weight gradient in the
// 16-bit type and adds it to the FP32 diff.
func (e *convolutionDNN[T]) weightGradientReduced(v *device.GPUView[T], bottom *blob.Blob[T], dy, ws cuda.DevicePtr) error {
	l := e.l
	r := &e.red
	weights := l.Blobs()[0]
	x, err := r.In(v, bottom, false)
	if err != nil {
		return err
	}
	if e.use[passBackwardFilter] { // FP32 partial sums, added to the FP32 diff
		return e.way.backwardFilter(&l.convBase, v, x, dy, v.MutableDiff(weights), ws)
	}
	dw, err := r.WeightDiff(weights)
	if err != nil {
		return err
	}
	if err := e.withFallback("weight gradient", &e.bwdFilter, func(a cuda.ConvAlgo) error {
		return e.dnn.ConvBackwardFilter(1, e.x.Desc, x, e.y.Desc, dy, e.conv, a, ws, 0, e.w, dw)
	}); err != nil {
		return err
	}
	return r.AddWeightDiff(v, weights)
}

// withFallback runs a pass with its algorithm *a and, where cuDNN refuses
// that algorithm in 16 bits, with algorithm 0 (the implicit GEMM, without
// workspace), which takes every shape, and keeps that one. cuDNN's search
// and heuristics both chose algorithms that their call then refused with
// CUDNN_STATUS_BAD_PARAM on the H100 (cuDNN 9): the FLOAT16 weight
// gradient of a 1x1 convolution of 3 channels into 5, and the BFLOAT16
// forward pass of CaffeNet's conv1 (3 channels, 11x11, stride 4).
func (e *convolutionDNN[T]) withFallback(pass string, a *cuda.ConvAlgo, run func(cuda.ConvAlgo) error) error {
	err := run(*a)
	if err == nil || *a == (cuda.ConvAlgo{}) {
		return err
	}
	if pass != "forward" && e.l.Context().Deterministic() {
		// Algorithm 0 of the gradients adds with atomics, in no fixed
		// order: not what -deterministic promises.
		return fmt.Errorf("%s: cuDNN refused its deterministic %s algorithm %d in %v, and algorithm 0 is not deterministic: train without -deterministic or in FP32: %w", e.l.Name(), pass, a.Algo, e.red.Storage(), err)
	}
	chosen := *a
	*a = cuda.ConvAlgo{}
	if err2 := run(*a); err2 != nil {
		*a = chosen
		return errors.Join(err, err2)
	}
	logf.Infof(e.l.Logger(), "Layer %s: cuDNN refused its %s %v in %v (%v); algorithm 0 computes it", e.l.Name(), pass, chosen, e.red.Storage(), err)
	return nil
}

// biasGradientChannelsLast adds the channels-last dy summed over images
// and positions to the FP32 bias diff, as biasGradient does row-major:
// one batched GEMM takes each image's channel sums, a row of 16-bit ones
// times its positions x channels matrix, in FP32 into ws, and a GEMV adds
// their sum over the images. A kernel per channel, as row-major, would
// read with a stride of the channels.
func (e *convolutionDNN[T]) biasGradientChannelsLast(g *device.GPUView[T], dy, ws cuda.DevicePtr) {
	l := e.l
	half := e.red.BlasType()
	c, s := l.numOutput, l.convOutSpatial
	g.GemmStridedMixed(blas.NoTrans, blas.NoTrans, 1, c, s, 1, g.Data(e.ones16), half, s, 0, dy, half, c, s*c, 0, ws, cuda.BlasFloat, c, c, l.num)
	g.Gemv(blas.Trans, l.num, c, 1, ws, g.Data(e.ones), 1, g.MutableDiff(l.Blobs()[1]))
}

// halfOnes makes ones16 hold n ones of the engine's 16-bit type, two to
// each float32 of the blob, for biasGradientChannelsLast (nothing where
// the engine computes in T).
func (e *convolutionDNN[T]) halfOnes(n int) error {
	if !e.red.On() {
		return nil
	}
	pair := uint32(0x3C003C00) // FLOAT16's 1 twice
	if e.red.Storage() == syncedmem.StorageBFloat16 {
		pair = 0x3F803F80
	}
	if err := kit.EnsureBlob(e.l, &e.ones16); err != nil {
		return err
	}
	if err := e.ones16.Reshape([]int{(n + 1) / 2}); err != nil {
		return err
	}
	data, ok := any(e.ones16.MutableCPUData()).([]float32)
	if !ok {
		return errors.New("16-bit ones need float32 blobs")
	}
	for i := range data {
		data[i] = math.Float32frombits(pair)
	}
	return nil
}
