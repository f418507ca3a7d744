package utility

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Eltwise's GPU engine in a 16-bit type (layer.ReducedEngine): SUM of up
// to three bottoms, with the ReLU fused after two (ResNet's residual
// additions), on 16-bit values computed in float. PROD and MAX stay FP32.

// maxReducedSumBottoms is the most bottoms a 16-bit SUM takes: with the
// top, what the context's scratch buffers can convert in one pass.
const maxReducedSumBottoms = 3

// SetReduced makes the engine compute in s (StorageNative: T again).
func (e *eltwiseGPU[T]) SetReduced(s syncedmem.Storage) error {
	l := e.l
	if s.Reduced() && (l.op != caffepb.EltwiseParameter_SUM || len(l.coeffs) > maxReducedSumBottoms) {
		return errors.New("16 bits only for SUM of at most three bottoms")
	}
	return e.red.SetReduced(l.Context(), s)
}

// inputs returns the bottoms' data in the engine's type (an array, so
// that a pass allocates nothing).
func (e *eltwiseGPU[T]) inputs(g *device.GPUView[T], bottom []*blob.Blob[T]) (xs [maxReducedSumBottoms]cuda.DevicePtr, err error) {
	for i, b := range bottom {
		if xs[i], err = e.red.In(g, b, false); err != nil {
			return xs, err
		}
	}
	return xs, nil
}

func (e *eltwiseGPU[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	e.red.Begin()
	n := top[0].Count()
	xs, err := e.inputs(g, bottom)
	if err != nil {
		return err
	}
	y, err := e.red.Out(g, top[0], false)
	if err != nil {
		return err
	}
	c := func(i int) float32 { return float32(l.coeffs[i]) }
	if l.fusesReLU() {
		var a cuda.Args
		a.Int(n).Float32(c(0)).Ptr(xs[0]).Float32(c(1)).Ptr(xs[1]).Float32(float32(l.reluSlope)).Ptr(y)
		name, threads := kit.HalfVectorKernel("eltwise_sum2_relu", n, xs[0], xs[1], y)
		if err := launch[float32](l.Context(), "eltwise.cu", name+e.red.Suffix(), threads, &a); err != nil {
			return err
		}
	} else {
		if err := e.red.Sum2(n, c(0), xs[0], c(1), xs[1], y); err != nil {
			return err
		}
		for i := 2; i < len(bottom); i++ {
			if err := e.red.Axpy(n, c(i), xs[i], y); err != nil {
				return err
			}
		}
	}
	if err := e.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

func (e *eltwiseGPU[T]) backwardReduced(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	e.red.Begin()
	n := top[0].Count()
	dy, err := e.red.In(g, top[0], true)
	if err != nil {
		return err
	}
	var dx [maxReducedSumBottoms]cuda.DevicePtr
	for i, b := range bottom {
		if propagateDown[i] {
			if dx[i], err = e.red.Out(g, b, true); err != nil {
				return err
			}
		}
	}
	if l.fusesReLU() {
		// As the FP32 pass: dy masked by the ReLU's gradient, taken from
		// y, goes back to the top's diff, and c_i times it to each bottom.
		y, err := e.red.In(g, top[0], false)
		if err != nil {
			return err
		}
		var a cuda.Args
		a.Int(n).Ptr(y).Float32(float32(l.reluSlope)).Float32(float32(l.coeffs[0])).Float32(float32(l.coeffs[1]))
		a.Ptr(dy).Ptr(dx[0]).Ptr(dx[1])
		name, threads := kit.HalfVectorKernel("eltwise_sum2_relu_backward", n, y, dy, dx[0], dx[1])
		if err := launch[float32](l.Context(), "eltwise.cu", name+e.red.Suffix(), threads, &a); err != nil {
			return err
		}
		if err := e.red.Done(g, top[0], true); err != nil {
			return err
		}
	} else {
		for i := range bottom {
			if dx[i] == 0 {
				continue
			}
			if l.coeffs[i] == 1 {
				err = e.red.Copy(n, dy, dx[i])
			} else {
				err = e.red.Scale(n, float32(l.coeffs[i]), dy, dx[i])
			}
			if err != nil {
				return err
			}
		}
	}
	for i, b := range bottom {
		if dx[i] != 0 {
			if err := e.red.Done(g, b, true); err != nil {
				return err
			}
		}
	}
	return g.Err()
}

// AcceptsChannelsLast: a 16-bit SUM adds its bottoms value by value, in
// either order (layer.ChannelsLastEngine).
func (e *eltwiseGPU[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast makes the engine take channels-last blobs as they are
// and convert row-major ones at its edges.
func (e *eltwiseGPU[T]) SetChannelsLast(on bool) error { return e.red.SetChannelsLast(on) }
