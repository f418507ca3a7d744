//go:build cuda

package layer

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes c and h on the device.
func (l *LSTMUnit[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.hidden).Ptr(g.data(bottom[0])).Ptr(g.data(bottom[1])).Ptr(g.data(bottom[2])).
		Ptr(g.mutableData(top[0])).Ptr(g.mutableData(top[1]))
	return launch[T](l.dev, "lstm_unit.cu", "lstm_unit_forward", n, &a)
}

// BackwardGPU computes the gradients of c_prev and x on the device.
func (l *LSTMUnit[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[2] {
		return errors.New("cannot backpropagate to sequence indicators")
	}
	if !propagateDown[0] && !propagateDown[1] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.hidden).Ptr(g.data(bottom[0])).Ptr(g.data(bottom[1])).Ptr(g.data(bottom[2])).
		Ptr(g.data(top[0])).Ptr(g.diff(top[0])).Ptr(g.diff(top[1])).
		Ptr(g.mutableDiff(bottom[0])).Ptr(g.mutableDiff(bottom[1]))
	return launch[T](l.dev, "lstm_unit.cu", "lstm_unit_backward", n, &a)
}
