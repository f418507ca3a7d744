package neuron

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// acceptsReLUDNN refuses a leaky ReLU: cuDNN's ReLU has no slope.
func acceptsReLUDNN(p *caffepb.LayerParameter) error {
	if p.GetReluParam().GetNegativeSlope() != 0 {
		return errors.New("cuDNN's ReLU has no negative_slope")
	}
	return nil
}

// activationDNN is the cuDNN engine of ReLU, Sigmoid and TanH: element
// by element over the blob as one (1, count, 1, 1) tensor; in place too.
type activationDNN[T layer.Float] struct {
	b    *layer.Base[T]
	dnn  *cuda.DNN
	x    kit.TensorDesc[T]
	desc *cuda.ActivationDesc
	red  kit.Reduced[T] // a 16-bit type to compute in (reduced.go)
}

func newActivationDNN[T layer.Float, L layer.Layer[T]](mode cuda.ActivationMode) func(L, *cuda.DNN) (layer.Engine[T], error) {
	return func(l L, dnn *cuda.DNN) (layer.Engine[T], error) {
		d, err := cuda.NewActivationDesc(mode)
		if err != nil {
			return nil, err
		}
		return &activationDNN[T]{b: l.LayerBase(), dnn: dnn, desc: d}, nil
	}
}

// Reshaped describes the bottom.
func (e *activationDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.x.SetAs(e.red.DNNType(), 1, bottom[0].Count(), 1, 1)
	}
	return e.x.Set(1, bottom[0].Count(), 1, 1)
}

// Forward applies the activation.
func (e *activationDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	g := e.b.GPU()
	if err := e.dnn.ActivationForward(e.desc, e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableData(top[0])); err != nil {
		return err
	}
	return g.Err()
}

// Backward computes the bottom's gradient.
func (e *activationDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	if e.red.On() {
		return e.backwardReduced(top, bottom)
	}
	g := e.b.GPU()
	if err := e.dnn.ActivationBackward(e.desc, e.x.Desc, g.Data(top[0]), e.x.Desc, g.Diff(top[0]), e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableDiff(bottom[0])); err != nil {
		return err
	}
	return g.Err()
}
