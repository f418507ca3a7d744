package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The neurons in a 16-bit type (layer.ReducedEngine): ReLU and Dropout on
// their own kernels (kernels/relu.cu, dropout.cu; Dropout's mask stays
// FP32), and ReLU, Sigmoid and TanH on cuDNN, each computed in float on
// FLOAT16 or BFLOAT16 values, in place too.

// SetReduced makes ReLU's GPU engine compute in s.
func (e *reluGPU[T]) SetReduced(s syncedmem.Storage) error {
	return e.red.SetReduced(e.l.Context(), s)
}

// reducedIO returns bottom's data and top's memory to write, in the
// engine's type (the same memory in place).
func reducedIO[T kit.Float](r *kit.Reduced[T], g *device.GPUView[T], bottom, top *blob.Blob[T], diff bool) (x, y cuda.DevicePtr, err error) {
	if x, err = r.In(g, bottom, diff); err != nil {
		return 0, 0, err
	}
	y, err = r.Out(g, top, diff)
	return x, y, err
}

func (e *reluGPU[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	e.red.Begin()
	x, y, err := reducedIO(&e.red, g, bottom[0], top[0], false)
	if err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(y).Float32(float32(l.slope))
	name, threads := kit.HalfVectorKernel("relu_forward", n, x, y)
	if err := launch[float32](l.Context(), "relu.cu", name+e.red.Suffix(), threads, &a); err != nil {
		return err
	}
	return e.red.Done(g, top[0], false)
}

// backwardReduced reads the bottom's data, which in place is the top's:
// the sign of max(x, 0) + slope*min(x, 0) is x's for slopes >= 0, as in
// Caffe's in-place ReLU.
func (e *reluGPU[T]) backwardReduced(top, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	e.red.Begin()
	x, err := e.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	dy, dx, err := reducedIO(&e.red, g, top[0], bottom[0], true)
	if err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(dy).Ptr(x).Ptr(dx).Float32(float32(l.slope))
	name, threads := kit.HalfVectorKernel("relu_backward", n, dy, x, dx)
	if err := launch[float32](l.Context(), "relu.cu", name+e.red.Suffix(), threads, &a); err != nil {
		return err
	}
	return e.red.Done(g, bottom[0], true)
}

// SetReduced makes the cuDNN activation compute in s.
func (e *activationDNN[T]) SetReduced(s syncedmem.Storage) error {
	if err := e.red.SetReduced(e.b.Context(), s); err != nil {
		return err
	}
	e.x.Dims = e.x.Dims[:0] // described again in the new type
	return nil
}

func (e *activationDNN[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	g := e.b.GPU()
	if err := e.x.SetAs(e.red.DNNType(), 1, bottom[0].Count(), 1, 1); err != nil {
		return err
	}
	e.red.Begin()
	x, y, err := reducedIO(&e.red, g, bottom[0], top[0], false)
	if err != nil {
		return err
	}
	if err := e.dnn.ActivationForward(e.desc, e.x.Desc, x, e.x.Desc, y); err != nil {
		return err
	}
	if err := e.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

func (e *activationDNN[T]) backwardReduced(top, bottom []*blob.Blob[T]) error {
	g := e.b.GPU()
	e.red.Begin()
	y, err := e.red.In(g, top[0], false)
	if err != nil {
		return err
	}
	x, err := e.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	dy, dx, err := reducedIO(&e.red, g, top[0], bottom[0], true)
	if err != nil {
		return err
	}
	if err := e.dnn.ActivationBackward(e.desc, e.x.Desc, y, e.x.Desc, dy, e.x.Desc, x, e.x.Desc, dx); err != nil {
		return err
	}
	if err := e.red.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}

// SetReduced makes Dropout's GPU engine compute in s.
func (e *dropoutGPU[T]) SetReduced(s syncedmem.Storage) error {
	return e.red.SetReduced(e.l.Context(), s)
}

// forwardReduced draws the mask as the FP32 pass does and applies it
// (TRAIN), or passes the input through (TEST).
func (e *dropoutGPU[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	e.red.Begin()
	x, y, err := reducedIO(&e.red, g, bottom[0], top[0], false)
	if err != nil {
		return err
	}
	n := bottom[0].Count()
	if !l.train() {
		return e.passThrough(g, n, x, y, top[0], false)
	}
	mask := g.MutableData(l.mask)
	g.RngUniform(n, 0, 1, mask, l.RNG())
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(mask).Ptr(y).Float32(float32(l.ratio)).Float32(float32(l.scale))
	if err := launch[float32](l.Context(), "dropout.cu", "dropout_forward"+e.red.Suffix(), n, &a); err != nil {
		return err
	}
	return e.red.Done(g, top[0], false)
}

// backwardReduced computes dx = dy * mask (TRAIN) or passes dy through.
func (e *dropoutGPU[T]) backwardReduced(top, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	e.red.Begin()
	dy, dx, err := reducedIO(&e.red, g, top[0], bottom[0], true)
	if err != nil {
		return err
	}
	n := bottom[0].Count()
	if !l.train() {
		return e.passThrough(g, n, dy, dx, bottom[0], true)
	}
	var a cuda.Args
	a.Int(n).Ptr(dy).Ptr(g.Data(l.mask)).Ptr(dx)
	if err := launch[float32](l.Context(), "dropout.cu", "dropout_backward"+e.red.Suffix(), n, &a); err != nil {
		return err
	}
	return e.red.Done(g, bottom[0], true)
}

// passThrough copies n 16-bit values from x to y (TEST: Dropout passes
// values and gradients through), none in place, and finishes the write
// to b's data or diff.
func (e *dropoutGPU[T]) passThrough(g *device.GPUView[T], n int, x, y cuda.DevicePtr, b *blob.Blob[T], diff bool) error {
	if x != y {
		if err := e.red.Copy(n, x, y); err != nil {
			return err
		}
	}
	return e.red.Done(g, b, diff)
}

// AcceptsChannelsLast: the ReLU reads and writes each value where it is,
// in either order (layer.ChannelsLastEngine).
func (e *reluGPU[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast makes the engine take channels-last blobs as they are
// and convert row-major ones at its edges.
func (e *reluGPU[T]) SetChannelsLast(on bool) error { return e.red.SetChannelsLast(on) }

// AcceptsChannelsLast: cuDNN's activation runs over the blob as one row
// of values, in either order (layer.ChannelsLastEngine).
func (e *activationDNN[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast makes the engine take channels-last blobs as they are
// and convert row-major ones at its edges.
func (e *activationDNN[T]) SetChannelsLast(on bool) error { return e.red.SetChannelsLast(on) }
