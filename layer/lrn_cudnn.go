package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// lrnDNN is LRN's cuDNN engine (ACROSS_CHANNELS).
type lrnDNN[T Float] struct {
	l    *LRN[T]
	dnn  *cuda.DNN
	x    tensorDesc[T]
	desc *cuda.LRNDesc
}

func newLRNDNN[T Float](l *LRN[T], dnn *cuda.DNN) (Engine[T], error) {
	d, err := cuda.NewLRNDesc(l.size, float64(l.alpha), float64(l.beta), float64(l.k))
	if err != nil {
		return nil, err
	}
	return &lrnDNN[T]{l: l, dnn: dnn, desc: d}, nil
}

// Reshaped describes the bottom (and top, of the same shape).
func (e *lrnDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	return e.x.set(e.l.num, e.l.channels, e.l.height, e.l.width)
}

// Forward normalizes.
func (e *lrnDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	g := e.l.gpu()
	if err := e.dnn.LRNForward(e.desc, e.x.d, g.Data(bottom[0]), e.x.d, g.MutableData(top[0])); err != nil {
		return err
	}
	return g.Err()
}

// Backward computes the bottom's gradient.
func (e *lrnDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := e.l.gpu()
	if err := e.dnn.LRNBackward(e.desc, e.x.d, g.Data(top[0]), e.x.d, g.Diff(top[0]), e.x.d, g.Data(bottom[0]), e.x.d, g.MutableDiff(bottom[0])); err != nil {
		return err
	}
	return g.Err()
}
