package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// softmaxDNN is Softmax's cuDNN engine: the softmax axis is cuDNN's
// channel axis of an (outer, channels, inner, 1) tensor.
type softmaxDNN[T layer.Float] struct {
	l   *softmaxLayer[T]
	dnn *cuda.DNN
	x   kit.TensorDesc[T]
}

func newSoftmaxDNN[T layer.Float](l *softmaxLayer[T], dnn *cuda.DNN) (layer.Engine[T], error) {
	return &softmaxDNN[T]{l: l, dnn: dnn}, nil
}

// Reshaped describes the bottom as (outer, channels, inner, 1).
func (e *softmaxDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	return e.x.Set(e.l.outer, e.l.channels, e.l.inner, 1)
}

// Forward computes the softmax.
func (e *softmaxDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	g := e.l.GPU()
	if err := e.dnn.SoftmaxForward(e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableData(top[0])); err != nil {
		return err
	}
	return g.Err()
}

// Backward computes the bottom's gradient from the top's.
func (e *softmaxDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := e.l.GPU()
	if err := e.dnn.SoftmaxBackward(e.x.Desc, g.Data(top[0]), e.x.Desc, g.Diff(top[0]), e.x.Desc, g.MutableDiff(bottom[0])); err != nil {
		return err
	}
	return g.Err()
}
