package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// LRN in a 16-bit type (layer.ReducedEngine) on gocaffe's own kernels
// (lrn.cu's lrn_walk_*), computing in float: cuDNN 9 has no BFLOAT16 LRN
// (CUDNN_STATUS_NOT_SUPPORTED on the H100), and one path serves both
// 16-bit types. No scale is stored: the backward pass computes the scales
// again from x, which saves an FP32 blob of the bottom's size.

// SetReduced makes the engine normalize in s (StorageNative: T again).
func (e *lrnDNN[T]) SetReduced(s syncedmem.Storage) error {
	if err := e.red.SetReduced(e.l.Context(), s); err != nil {
		return err
	}
	e.x.Dims = e.x.Dims[:0] // described again at the next Reshaped
	return nil
}

// AcceptsChannelsLast: in 16 bits the engine normalizes channels-last
// blobs too, on kernels of their own (layer.ChannelsLastEngine).
func (e *lrnDNN[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast makes the engine normalize channels-last blobs: a
// thread per element, and for the bottom gradient of channels in eights
// and windows of 3 to 9 a thread per 8 channels (lrn.cu's _cl8).
func (e *lrnDNN[T]) SetChannelsLast(on bool) error { return e.red.SetChannelsLast(on) }

// clArgs starts the arguments the channels-last kernels share
// (lrn.cu's lrn_cl_*: a thread per element).
func (e *lrnDNN[T]) clArgs(a *cuda.Args) *cuda.Args {
	l := e.l
	sumFactor, constant, _ := l.coeffs()
	return a.Int(l.num * l.channels * l.height * l.width).Int(l.channels).Int(l.window().half).
		Float32(float32(sumFactor)).Float32(float32(constant))
}

// walkArgs starts the arguments the walk kernels share.
func (e *lrnDNN[T]) walkArgs(a *cuda.Args) *cuda.Args {
	l := e.l
	sumFactor, constant, _ := l.coeffs()
	plane := l.height * l.width
	return a.Int(l.num * plane).Int(l.channels).Int(plane).Int(l.window().half).
		Float32(float32(sumFactor)).Float32(float32(constant))
}

func (e *lrnDNN[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l, g, r := e.l, e.l.GPU(), &e.red
	r.Begin()
	x, err := r.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := r.Out(g, top[0], false)
	if err != nil {
		return err
	}
	var a cuda.Args
	name, n := "lrn_walk_forward", l.num*l.height*l.width
	if r.ChannelsLast() {
		name, n = "lrn_cl_forward", n*l.channels
		e.clArgs(&a)
	} else {
		e.walkArgs(&a)
	}
	a.Float32(float32(l.beta)).Ptr(x).Ptr(y)
	if err := launch[T](l.Context(), "lrn.cu", name+r.Suffix(), n, &a); err != nil {
		return err
	}
	if err := r.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

func (e *lrnDNN[T]) backwardReduced(top, bottom []*blob.Blob[T]) error {
	l, g, r := e.l, e.l.GPU(), &e.red
	r.Begin()
	x, err := r.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	dy, err := r.In(g, top[0], true)
	if err != nil {
		return err
	}
	dx, err := r.Out(g, bottom[0], true)
	if err != nil {
		return err
	}
	_, _, backFactor := l.coeffs()
	var a cuda.Args
	name, n := "lrn_walk_backward", l.num*l.height*l.width
	if half := l.window().half; r.ChannelsLast() && l.channels%8 == 0 && half >= 1 && half <= 4 {
		sumFactor, constant, _ := l.coeffs()
		name, n = fmt.Sprintf("lrn_cl8_backward_h%d", half), n*l.channels/8
		a.Int(n).Int(l.channels).Float32(float32(sumFactor)).Float32(float32(constant))
	} else if r.ChannelsLast() {
		name, n = "lrn_cl_backward", n*l.channels
		e.clArgs(&a)
	} else {
		e.walkArgs(&a)
	}
	a.Float32(float32(backFactor)).Float32(float32(l.beta)).Ptr(x).Ptr(dy).Ptr(dx)
	if err := launch[T](l.Context(), "lrn.cu", name+r.Suffix(), n, &a); err != nil {
		return err
	}
	if err := r.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}
