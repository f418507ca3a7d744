package utility

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The inner product in a 16-bit type (layer.ReducedEngine): cuBLAS's
// GemmEx on FLOAT16 or BFLOAT16 inputs, summing in FP32; the weight
// gradient summed straight into the FP32 diff, the bias added and its
// gradient summed in FP32.

// SetReduced makes the engine compute in s (StorageNative: in T again).
func (e *innerProductGPU[T]) SetReduced(s syncedmem.Storage) error {
	return e.red.SetReduced(e.l.Context(), s)
}

func (e *innerProductGPU[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	r := &e.red
	t := r.BlasType()
	r.Begin()
	x, err := r.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	w, err := r.Weights(g, l.Blobs()[0])
	if err != nil {
		return err
	}
	y, err := r.Out(g, top[0], false)
	if err != nil {
		return err
	}
	g.GemmMixed(blas.NoTrans, l.weightTrans(), l.m, l.numOutput, l.k, 1, x, t, w, t, 0, y, t)
	if err := g.Err(); err != nil {
		return err
	}
	if l.biasTerm {
		if err := r.AddBias(l.m*l.numOutput, l.numOutput, 1, y, g.Data(l.Blobs()[1])); err != nil {
			return err
		}
	}
	if err := r.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

func (e *innerProductGPU[T]) backwardReduced(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	r := &e.red
	t := r.BlasType()
	r.Begin()
	dy, err := r.In(g, top[0], true)
	if err != nil {
		return err
	}
	if l.ParamPropagateDown(0) {
		x, err := r.In(g, bottom[0], false)
		if err != nil {
			return err
		}
		dw := g.MutableDiff(l.Blobs()[0])
		if l.transpose {
			g.GemmMixed(blas.Trans, blas.NoTrans, l.k, l.numOutput, l.m, 1, x, t, dy, t, 1, dw, cuda.BlasFloat)
		} else {
			g.GemmMixed(blas.Trans, blas.NoTrans, l.numOutput, l.k, l.m, 1, dy, t, x, t, 1, dw, cuda.BlasFloat)
		}
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		if err := r.AddBiasGradient(l.m, l.numOutput, 1, dy, g.MutableDiff(l.Blobs()[1])); err != nil {
			return err
		}
	}
	if propagateDown[0] {
		w, err := r.Weights(g, l.Blobs()[0])
		if err != nil {
			return err
		}
		dx, err := r.Out(g, bottom[0], true)
		if err != nil {
			return err
		}
		wt := blas.NoTrans
		if l.transpose {
			wt = blas.Trans
		}
		g.GemmMixed(blas.NoTrans, wt, l.m, l.k, l.numOutput, 1, dy, t, w, t, 0, dx, t)
		if err := g.Err(); err != nil {
			return err
		}
		if err := r.Done(g, bottom[0], true); err != nil {
			return err
		}
	}
	return g.Err()
}
