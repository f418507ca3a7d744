package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// axpyGPU is Axpy's GPU half.
type axpyGPU[T layer.Float] struct{ l *axpyLayer[T] }

func newAxpyGPU[T layer.Float](l *axpyLayer[T]) layer.Engine[T] { return axpyGPU[T]{l} }

// Forward computes a * x + y on the device.
func (e axpyGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.Data(bottom[2])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "axpy.cu", "axpy_forward", n, &a)
}

// Backward computes da, dx and dy on the device.
func (e axpyGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	n := top[0].Count()
	if propagateDown[0] {
		var a cuda.Args
		a.Int(l.planes).Int(l.spatial).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0]))
		if err := launch[T](l.Context(), "axpy.cu", "axpy_da", l.planes, &a); err != nil {
			return err
		}
	}
	if propagateDown[1] {
		var a cuda.Args
		a.Int(n).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[1]))
		if err := launch[T](l.Context(), "axpy.cu", "axpy_dx", n, &a); err != nil {
			return err
		}
	}
	if propagateDown[2] {
		g.Copy(n, g.Diff(top[0]), g.MutableDiff(bottom[2]))
	}
	return g.Err()
}
