package normalization

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// lrnDNN is LRN's cuDNN engine (ACROSS_CHANNELS).
type lrnDNN[T layer.Float] struct {
	l    *lrnLayer[T]
	dnn  *cuda.DNN
	x    kit.TensorDesc[T]
	desc *cuda.LRNDesc
	red  kit.Reduced[T] // a 16-bit type to compute in (SetReduced)
}

func newLRNDNN[T layer.Float](l *lrnLayer[T], dnn *cuda.DNN) (layer.Engine[T], error) {
	d, err := cuda.NewLRNDesc(l.size, float64(l.alpha), float64(l.beta), float64(l.k))
	if err != nil {
		return nil, err
	}
	return &lrnDNN[T]{l: l, dnn: dnn, desc: d}, nil
}

// Reshaped describes the bottom (and top, of the same shape).
func (e *lrnDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return nil // the 16-bit kernels are gocaffe's own (lrn_reduced.go)
	}
	return e.x.Set(e.l.num, e.l.channels, e.l.height, e.l.width)
}

// Forward normalizes.
func (e *lrnDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	g := e.l.GPU()
	if err := e.dnn.LRNForward(e.desc, e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableData(top[0])); err != nil {
		return err
	}
	return g.Err()
}

// Backward computes the bottom's gradient.
func (e *lrnDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	if e.red.On() {
		return e.backwardReduced(top, bottom)
	}
	g := e.l.GPU()
	if err := e.dnn.LRNBackward(e.desc, e.x.Desc, g.Data(top[0]), e.x.Desc, g.Diff(top[0]), e.x.Desc, g.Data(bottom[0]), e.x.Desc, g.MutableDiff(bottom[0])); err != nil {
		return err
	}
	return g.Err()
}

// checkLRNForDNN says whether cuDNN computes a layer's LRN: across
// channels, with the window and constants cuDNN allows.
func checkLRNForDNN(p *caffepb.LayerParameter) error {
	lp := p.GetLrnParam()
	switch {
	case lp.GetNormRegion() != caffepb.LRNParameter_ACROSS_CHANNELS:
		return errors.New("cuDNN's LRN is across channels only")
	case lp.GetLocalSize() < 1 || lp.GetLocalSize() > 16:
		return fmt.Errorf("cuDNN's LRN takes local_size 1 to 16, not %d", lp.GetLocalSize())
	case lp.GetK() < 1e-5 || lp.GetBeta() < 0.01:
		return fmt.Errorf("cuDNN's LRN needs k >= 1e-5 and beta >= 0.01 (k %g, beta %g)", lp.GetK(), lp.GetBeta())
	}
	return nil
}
