package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// thresholdGPU is Threshold's GPU half.
type thresholdGPU[T layer.Float] struct{ l *thresholdLayer[T] }

func newThresholdGPU[T layer.Float](l *thresholdLayer[T]) layer.Engine[T] { return thresholdGPU[T]{l} }

// Forward computes the step on the device.
func (e thresholdGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "threshold.cu", "threshold_forward", n, kit.ScalarArg(&a, l.threshold))
}

// Backward fails if the bottom's gradient is asked for.
func (e thresholdGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return l.BackwardCPU(top, propagateDown, bottom)
}
