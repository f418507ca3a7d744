package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// poolingGPU is Pooling's GPU half.
type poolingGPU[T layer.Float] struct {
	l    *poolingLayer[T]
	half *poolingReduced[T] // computes in a 16-bit type when set (SetReduced)
}

func newPoolingGPU[T layer.Float](l *poolingLayer[T]) layer.Engine[T] { return &poolingGPU[T]{l: l} }

// Forward pools on the device, one thread per output element.
func (e *poolingGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Forward(bottom, top)
	}
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Int32s(l.geomArgs[:]).Ptr(g.MutableData(top[0]))
	switch l.method {
	case caffepb.PoolingParameter_MAX:
		a.Ptr(g.MutableData(l.indexBlob(top)))
		return launch[T](l.Context(), "pooling.cu", "max_pool_forward", n, &a)
	case caffepb.PoolingParameter_AVE:
		return launch[T](l.Context(), "pooling.cu", "ave_pool_forward", n, &a)
	}
	s := g.MutableData(l.sample)
	a.Ptr(s)
	if l.Phase() != caffepb.Phase_TRAIN {
		return launch[T](l.Context(), "pooling.cu", "sto_pool_forward_test", n, &a)
	}
	g.RngUniform(n, 0, 1, s, l.RNG())
	if err := g.Err(); err != nil {
		return err
	}
	return launch[T](l.Context(), "pooling.cu", "sto_pool_forward_train", n, &a)
}

// Backward computes the bottom's gradient on the device, one thread per
// bottom element.
func (e *poolingGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Backward(top, propagateDown, bottom)
	}
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0]))
	switch {
	case l.method == caffepb.PoolingParameter_MAX:
		a.Ptr(g.Data(l.indexBlob(top)))
	case l.method == caffepb.PoolingParameter_AVE:
		a.Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
		return launch[T](l.Context(), "pooling.cu", "ave_pool_backward", n, &a)
	case l.Phase() == caffepb.Phase_TRAIN:
		a.Ptr(g.Data(l.sample))
	default:
		a.Ptr(g.Data(bottom[0])).Ptr(g.Data(top[0])).Ptr(g.Data(l.sample)).Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
		return launch[T](l.Context(), "pooling.cu", "sto_pool_backward_test", n, &a)
	}
	a.Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "pooling.cu", "index_pool_backward", n, &a)
}
