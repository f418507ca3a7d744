package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// clipGPU is Clip's GPU half.
type clipGPU[T layer.Float] struct{ l *clipLayer[T] }

func newClipGPU[T layer.Float](l *clipLayer[T]) layer.Engine[T] { return clipGPU[T]{l} }

// Forward clips on the device.
func (e clipGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "clip.cu", "clip_forward", n, kit.ScalarArg(kit.ScalarArg(&a, l.lo), l.hi))
}

// Backward passes the gradient inside [min, max] on the device.
func (e clipGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(l.input.input(bottom[0], top[0]))).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "clip.cu", "clip_backward", n, kit.ScalarArg(kit.ScalarArg(&a, l.lo), l.hi))
}
