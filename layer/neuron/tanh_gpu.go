package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// tanhGPU is TanH's GPU half.
type tanhGPU[T layer.Float] struct{ l *tanhLayer[T] }

func newTanHGPU[T layer.Float](l *tanhLayer[T]) layer.Engine[T] { return tanhGPU[T]{l} }

// Forward computes the hyperbolic tangent on the device.
func (e tanhGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	return kit.TanhForward[T](l.Context(), n, g.Data(bottom[0]), g.MutableData(top[0]))
}

// Backward computes the bottom's gradient from the top on the device.
func (e tanhGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	return kit.TanhBackward[T](l.Context(), n, g.Diff(top[0]), g.Data(top[0]), g.MutableDiff(bottom[0]))
}
