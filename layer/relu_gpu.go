package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

func init() { registerGPU("ReLU", newReLUGPU[float32], newReLUGPU[float64]) }

// reluGPU is ReLU's GPU half (kernels/relu.cu).
type reluGPU[T Float] struct{ l *ReLU[T] }

func newReLUGPU[T Float](l *ReLU[T]) Engine[T] { return reluGPU[T]{l} }

// Forward computes the activation on the device.
func (e reluGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	scalarArg(a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0])), l.slope)
	return launch[T](l.ctx, "relu.cu", "relu_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e reluGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, "relu.cu", "relu_backward", n, scalarArg(&a, l.slope))
}
