package vision

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// poolingReduced pools in a 16-bit type, for both of Pooling's GPU
// engines (layer.ReducedEngine): MAX on the CAFFE engine's kernels, which
// keep each window's argmax as a byte (poolingGPU.offsets), so that
// Caffe's rounded-up shapes (ResNet's pool1) pool in 16 bits too and the
// backward pass reads neither x nor y (cuDNN's max pooling reads both,
// which the memory plan's Pooling rule does not keep); AVE on cuDNN (the
// padding counted, as Caffe's), where Caffe's output size, rounded up, is
// cuDNN's, rounded down: other shapes stay in T.
type poolingReduced[T kit.Float] struct {
	l      *poolingLayer[T]
	dnn    *cuda.DNN
	x, y   kit.TensorDesc[T]
	pool   *cuda.PoolDesc
	red    kit.Reduced[T]
	argmax *poolingGPU[T] // MAX: the engine holding the offsets
}

// newPoolingReduced returns the 16-bit pooling of l in s, or an error
// saying why l cannot pool so. argmax is the CAFFE engine (nil on the
// cuDNN engine, which takes AVE alone).
func newPoolingReduced[T kit.Float](l *poolingLayer[T], s syncedmem.Storage, argmax *poolingGPU[T]) (*poolingReduced[T], error) {
	if len(l.Param().GetTop()) > 1 {
		return nil, errors.New("no mask top in 16 bits")
	}
	switch l.method {
	case caffepb.PoolingParameter_MAX:
		if argmax == nil || l.kernelH*l.kernelW > maxWindowOffsets {
			return nil, fmt.Errorf("MAX in 16 bits needs windows of at most %d values, on the CAFFE engine", maxWindowOffsets)
		}
		p := &poolingReduced[T]{l: l, argmax: argmax}
		return p, p.red.SetReduced(l.Context(), s)
	case caffepb.PoolingParameter_AVE:
	default:
		return nil, errors.New("cuDNN pools MAX and AVE, not STOCHASTIC")
	}
	mode := cuda.PoolAverage
	if err := l.cuDNNRounds(); err != nil {
		return nil, err
	}
	dnn, err := l.Context().DNN()
	if err != nil {
		return nil, err
	}
	pool, err := cuda.NewPoolDesc(mode, []int{l.kernelH, l.kernelW}, []int{l.padH, l.padW}, []int{l.strideH, l.strideW})
	if err != nil {
		return nil, err
	}
	p := &poolingReduced[T]{l: l, dnn: dnn, pool: pool}
	if err := p.red.SetReduced(l.Context(), s); err != nil {
		pool.Destroy()
		return nil, err
	}
	return p, nil
}

// cuDNNRounds reports an error where cuDNN's output size (rounded down)
// is not Caffe's (rounded up).
func (l *poolingLayer[T]) cuDNNRounds() error {
	floor := func(in, k, p, s int) int { return (in+2*p-k)/s + 1 }
	if floor(l.height, l.kernelH, l.padH, l.strideH) != l.pooledH || floor(l.width, l.kernelW, l.padW, l.strideW) != l.pooledW {
		return fmt.Errorf("Caffe's output of %dx%d rounds up where cuDNN's rounds down", l.pooledH, l.pooledW)
	}
	return nil
}

// describe gives the descriptors the shapes of this pass.
func (p *poolingReduced[T]) describe() error {
	l := p.l
	if err := l.cuDNNRounds(); err != nil {
		return fmt.Errorf("pooling in %v: %w", p.red.Storage(), err)
	}
	layout := cuda.LayoutNCHW
	if p.red.ChannelsLast() {
		layout = cuda.LayoutNHWC
	}
	if err := p.x.SetIn(p.red.DNNType(), layout, l.num, l.channels, l.height, l.width); err != nil {
		return err
	}
	return p.y.SetIn(p.red.DNNType(), layout, l.num, l.channels, l.pooledH, l.pooledW)
}

// order names the kernels of the engine's order: "_cl" for the
// channels-last twins of the offsets' kernels, "" for row-major ones.
func (p *poolingReduced[T]) order() string {
	if p.red.ChannelsLast() {
		return "_cl"
	}
	return ""
}

// eightChannels reports whether MAX takes the channels-last kernels of 8
// channels a thread (pooling.cu's _cl8): 16-byte loads of a position's
// channels, which need their count a multiple of 8.
func (p *poolingReduced[T]) eightChannels() bool {
	return p.red.ChannelsLast() && p.l.channels%8 == 0
}

// setChannelsLast makes the 16-bit pooling read and write channels-last
// blobs: MAX on the offsets' _cl kernels, a thread per output channel so
// that a warp reads consecutive channels of one position; AVE on cuDNN,
// described NHWC (describe).
func (p *poolingReduced[T]) setChannelsLast(on bool) error {
	if p == nil {
		if on {
			return errors.New("channels-last pooling needs a 16-bit type")
		}
		return nil
	}
	return p.red.SetChannelsLast(on)
}

// Forward pools.
func (p *poolingReduced[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if p.argmax != nil {
		return p.maxForward(bottom, top)
	}
	if err := p.describe(); err != nil {
		return err
	}
	g := p.l.GPU()
	p.red.Begin()
	x, err := p.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := p.red.Out(g, top[0], false)
	if err != nil {
		return err
	}
	if err := p.dnn.PoolForward(p.pool, p.x.Desc, x, p.y.Desc, y); err != nil {
		return err
	}
	if err := p.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

// Backward spreads the gradient over the windows.
func (p *poolingReduced[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	if p.argmax != nil {
		return p.maxBackward(top, bottom)
	}
	if err := p.describe(); err != nil {
		return err
	}
	g := p.l.GPU()
	p.red.Begin()
	y, err := p.red.In(g, top[0], false)
	if err != nil {
		return err
	}
	dy, err := p.red.In(g, top[0], true)
	if err != nil {
		return err
	}
	x, err := p.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	dx, err := p.red.Out(g, bottom[0], true)
	if err != nil {
		return err
	}
	if err := p.dnn.PoolBackward(p.pool, p.y.Desc, y, p.y.Desc, dy, p.x.Desc, x, p.x.Desc, dx); err != nil {
		return err
	}
	if err := p.red.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}

// maxForward pools MAX on 16-bit values, each window's argmax kept as a
// byte offset.
func (p *poolingReduced[T]) maxForward(bottom, top []*blob.Blob[T]) error {
	l, g := p.l, p.l.GPU()
	if p.argmax.offsets == 0 || top[0].Count() > p.argmax.offsetsCap {
		return fmt.Errorf("layer %s: no argmax offsets for %d outputs", l.Name(), top[0].Count())
	}
	p.red.Begin()
	x, err := p.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := p.red.Out(g, top[0], false)
	if err != nil {
		return err
	}
	name, n := "max_pool_forward_offsets"+p.order(), top[0].Count()
	if p.eightChannels() {
		name, n = "max_pool_forward_offsets_cl8", n/8
	}
	var a cuda.Args
	a.Int(n).Ptr(x).Int32s(l.geomArgs[:]).Ptr(y).Ptr(p.argmax.offsets)
	if err := launch[float32](l.Context(), "pooling.cu", name+p.red.Suffix(), n, &a); err != nil {
		return err
	}
	if err := p.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

// maxBackward routes each output's gradient to its window's argmax.
func (p *poolingReduced[T]) maxBackward(top, bottom []*blob.Blob[T]) error {
	l, g := p.l, p.l.GPU()
	p.red.Begin()
	dy, err := p.red.In(g, top[0], true)
	if err != nil {
		return err
	}
	dx, err := p.red.Out(g, bottom[0], true)
	if err != nil {
		return err
	}
	name, n := l.offsetBackward(bottom[0], top[0])
	if name == "offset_pool_tiles" && p.eightChannels() {
		name, n = name+"_cl8", n/8
	} else {
		name += p.order()
	}
	var a cuda.Args
	a.Int(n).Ptr(dy).Ptr(p.argmax.offsets).Int32s(l.geomArgs[:]).Ptr(dx)
	if err := launch[float32](l.Context(), "pooling.cu", name+p.red.Suffix(), n, &a); err != nil {
		return err
	}
	if err := p.red.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}

// Close frees the descriptor.
func (p *poolingReduced[T]) Close() error {
	if p.pool != nil {
		p.pool.Destroy()
	}
	return nil
}

// setReduced makes *half pool l in s, or in T again for StorageNative
// (argmax: as newPoolingReduced).
func setPoolingReduced[T kit.Float](l *poolingLayer[T], half **poolingReduced[T], s syncedmem.Storage, argmax *poolingGPU[T]) error {
	channelsLast := *half != nil && (*half).red.ChannelsLast() // kept across types, as the layer's order
	if *half != nil {
		if err := (*half).Close(); err != nil {
			return err
		}
		*half = nil
	}
	if !s.Reduced() {
		return nil
	}
	p, err := newPoolingReduced(l, s, argmax)
	if err != nil {
		return err
	}
	*half = p
	return p.setChannelsLast(channelsLast)
}

// SetReduced makes Caffe's GPU engine pool in s: MAX on its own kernels,
// AVE on cuDNN.
func (e *poolingGPU[T]) SetReduced(s syncedmem.Storage) error {
	return setPoolingReduced(e.l, &e.half, s, e)
}

// SetReduced makes the cuDNN engine pool in s.
func (e *poolingDNN[T]) SetReduced(s syncedmem.Storage) error {
	return setPoolingReduced(e.l, &e.half, s, nil)
}

// AcceptsChannelsLast: the 16-bit pooling computes in either order
// (layer.ChannelsLastEngine).
func (e *poolingGPU[T]) AcceptsChannelsLast() bool { return e.half != nil }

// SetChannelsLast makes the 16-bit pooling compute channels-last.
func (e *poolingGPU[T]) SetChannelsLast(on bool) error { return e.half.setChannelsLast(on) }

// AcceptsChannelsLast: as poolingGPU's.
func (e *poolingDNN[T]) AcceptsChannelsLast() bool { return e.half != nil }

// SetChannelsLast makes the 16-bit pooling compute channels-last.
func (e *poolingDNN[T]) SetChannelsLast(on bool) error { return e.half.setChannelsLast(on) }

// Close frees the 16-bit pooling's memory and the argmax offsets.
func (e *poolingGPU[T]) Close() error {
	return errors.Join(setPoolingReduced(e.l, &e.half, syncedmem.StorageNative, nil), e.freeOffsets())
}

// Close frees the 16-bit pooling's memory.
func (e *poolingDNN[T]) Close() error {
	return setPoolingReduced(e.l, &e.half, syncedmem.StorageNative, nil)
}
