package recurrent

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// lstmUnitGPU is LSTMUnit's GPU half.
type lstmUnitGPU[T layer.Float] struct{ l *lstmUnitLayer[T] }

func newLSTMUnitGPU[T layer.Float](l *lstmUnitLayer[T]) layer.Engine[T] { return lstmUnitGPU[T]{l} }

// Forward computes c and h on the device.
func (e lstmUnitGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.hidden).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.Data(bottom[2])).
		Ptr(g.MutableData(top[0])).Ptr(g.MutableData(top[1]))
	return launch[T](l.Context(), "lstm_unit.cu", "lstm_unit_forward", n, &a)
}

// Backward computes the gradients of c_prev and x on the device.
func (e lstmUnitGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[2] {
		return errors.New("cannot backpropagate to sequence indicators")
	}
	if !propagateDown[0] && !propagateDown[1] {
		return nil
	}
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.hidden).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.Data(bottom[2])).
		Ptr(g.Data(top[0])).Ptr(g.Diff(top[0])).Ptr(g.Diff(top[1])).
		Ptr(g.MutableDiff(bottom[0])).Ptr(g.MutableDiff(bottom[1]))
	return launch[T](l.Context(), "lstm_unit.cu", "lstm_unit_backward", n, &a)
}
