package vision

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// acceptsPoolDNN: as Caffe's factory, cuDNN pools AVE with one top; MAX
// stays on Caffe's kernels, whose argmax (the first maximum, which ties
// after a ReLU make frequent) cuDNN's backward pass does not reproduce.
func acceptsPoolDNN(p *caffepb.LayerParameter) error {
	if len(p.GetTop()) > 1 {
		return errors.New("cuDNN pooling has one top")
	}
	if p.GetPoolingParam().GetPool() != caffepb.PoolingParameter_AVE {
		return errors.New("cuDNN pools AVE only (Caffe's argmax for MAX)")
	}
	return nil
}

// poolingDNN is Pooling's cuDNN engine for AVE. cuDNN's output size rounds
// down; where Caffe's rounds up to one more window (partly outside the
// padded image), the pass goes to Caffe's own GPU engine.
type poolingDNN[T layer.Float] struct {
	l      *poolingLayer[T]
	dnn    *cuda.DNN
	x, y   kit.TensorDesc[T]
	pool   *cuda.PoolDesc
	caffe  layer.Engine[T] // for shapes cuDNN rounds otherwise
	useDNN bool
	half   *poolingReduced[T] // computes in a 16-bit type when set (SetReduced)
}

func newPoolingDNN[T layer.Float](l *poolingLayer[T], dnn *cuda.DNN) (layer.Engine[T], error) {
	caffe, err := layer.NewEngine[T](l, layer.EngineCaffe)
	if err != nil {
		return nil, err
	}
	return &poolingDNN[T]{l: l, dnn: dnn, caffe: caffe}, nil
}

// Reshaped describes the shapes, and decides whether cuDNN's rounding
// gives Caffe's output size.
func (e *poolingDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	l := e.l
	floor := func(in, k, p, s int) int { return (in+2*p-k)/s + 1 }
	e.useDNN = floor(l.height, l.kernelH, l.padH, l.strideH) == l.pooledH && floor(l.width, l.kernelW, l.padW, l.strideW) == l.pooledW
	if !e.useDNN {
		if r, ok := e.caffe.(layer.EngineReshaper[T]); ok {
			return r.Reshaped(bottom, top)
		}
		return nil
	}
	if err := e.x.Set(l.num, l.channels, l.height, l.width); err != nil {
		return err
	}
	if err := e.y.Set(l.num, l.channels, l.pooledH, l.pooledW); err != nil {
		return err
	}
	if e.pool == nil {
		p, err := cuda.NewPoolDesc(cuda.PoolAverage, []int{l.kernelH, l.kernelW}, []int{l.padH, l.padW}, []int{l.strideH, l.strideW})
		if err != nil {
			return err
		}
		e.pool = p
	}
	return nil
}

// Forward pools on cuDNN (or Caffe's kernels).
func (e *poolingDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Forward(bottom, top)
	}
	if !e.useDNN {
		return e.caffe.Forward(bottom, top)
	}
	g := e.l.GPU()
	if err := e.dnn.PoolForward(e.pool, e.x.Desc, g.Data(bottom[0]), e.y.Desc, g.MutableData(top[0])); err != nil {
		return err
	}
	return g.Err()
}

// Backward spreads the gradient over the windows.
func (e *poolingDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Backward(top, propagateDown, bottom)
	}
	if !e.useDNN {
		return e.caffe.Backward(top, propagateDown, bottom)
	}
	if !propagateDown[0] {
		return nil
	}
	g := e.l.GPU()
	if err := e.dnn.PoolBackward(e.pool, e.y.Desc, g.Data(top[0]), e.y.Desc, g.Diff(top[0]), e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableDiff(bottom[0])); err != nil {
		return err
	}
	return g.Err()
}
