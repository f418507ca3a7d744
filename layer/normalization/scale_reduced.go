package normalization

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Scale's GPU engine in a 16-bit type (layer.ReducedEngine), for a
// learnable scale (one bottom): the fused passes of scale_gpu.go on 16-bit
// activations, the scale, bias and their gradients in FP32. After a
// BatchNorm in place the BatchNorm's engine computes it (Fuse); this path
// runs where the fusion does not hold (a partial pass, a Scale of its own).

// SetReduced makes the engine compute in s (StorageNative: T again).
func (e *scaleGPU[T]) SetReduced(s syncedmem.Storage) error {
	if s.Reduced() && (len(e.l.Blobs()) == 0 || e.l.biasIndex == 0) { // the scale is a second bottom
		return errors.New("16 bits only for a learnable scale, not one given as a second bottom")
	}
	return e.red.SetReduced(e.l.Context(), s)
}

// forwardReduced sets y = x * s (+ b), saving x's 16-bit values in temp
// when in place (temp holds at least two bytes a value in any storage).
func (e *scaleGPU[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	e.red.Begin()
	n := bottom[0].Count()
	x, err := e.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := e.red.Out(g, top[0], false)
	if err != nil {
		return err
	}
	var save, bias cuda.DevicePtr
	if bottom[0] == top[0] {
		save = g.MutableData(l.temp)
	}
	if l.biasIndex >= 0 {
		bias = g.Data(l.Blobs()[l.biasIndex])
	}
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Int(l.shape.Dim).Int(l.shape.Inner).Ptr(x).Ptr(g.Data(l.Blobs()[0])).Ptr(bias).Ptr(y).Ptr(save)
	if err := launch[T](l.Context(), "scale.cu", "scale_forward"+e.red.Suffix(), n, &a); err != nil {
		return err
	}
	if err := e.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

// backwardReduced adds the parameters' gradients, then sets dx = dy * s
// (in place over dy).
func (e *scaleGPU[T]) backwardReduced(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	e.red.Begin()
	dy, err := e.red.In(g, top[0], true)
	if err != nil {
		return err
	}
	var db, ds cuda.DevicePtr
	if l.biasIndex >= 0 && l.ParamPropagateDown(l.biasIndex) {
		db = g.MutableDiff(l.Blobs()[l.biasIndex])
	}
	if l.ParamPropagateDown(0) {
		ds = g.MutableDiff(l.Blobs()[0])
	}
	if (db != 0 || ds != 0) && bottom[0].Count() > 0 {
		x := g.Data(l.temp)
		if bottom[0] != top[0] {
			if x, err = e.red.In(g, bottom[0], false); err != nil {
				return err
			}
		}
		if err := g.Err(); err != nil {
			return err
		}
		f, err := kernel[T](l.Context(), "scale.cu", "scale_param_sums"+e.red.Suffix())
		if err != nil {
			return err
		}
		var a cuda.Args
		a.Int(l.shape.Outer).Int(l.shape.Dim).Int(l.shape.Inner).Ptr(dy).Ptr(x).Ptr(db).Ptr(ds)
		if err := f.Launch(cuda.Dim3{X: l.shape.Dim}, cuda.Dim3{X: scaleSumThreads}, 0, nil, &a); err != nil {
			return err
		}
	}
	if !propagateDown[0] {
		return g.Err()
	}
	dx, err := e.red.Out(g, bottom[0], true)
	if err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.shape.Dim).Int(l.shape.Inner).Ptr(dy).Ptr(g.Data(l.Blobs()[0])).Ptr(dx)
	if err := launch[T](l.Context(), "scale.cu", "scale_backward_data"+e.red.Suffix(), n, &a); err != nil {
		return err
	}
	if err := e.red.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}

// AcceptsChannelsLast: the engine reads and writes its blobs only through
// kit.Reduced, which reorders channels-last blobs into its scratch and
// back (layer.ChannelsLastEngine). After a BatchNorm in place, whose own
// kernels compute it, it never runs; elsewhere the reordering is its cost.
func (e *scaleGPU[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast leaves the engine computing row-major: its kernels
// index channels so.
func (e *scaleGPU[T]) SetChannelsLast(bool) error { return nil }
