package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// reluGPU is ReLU's GPU half (kernels/relu.cu): the vector kernels where
// every array is 16-byte aligned (a blob's always is), one element a
// thread otherwise.
type reluGPU[T layer.Float] struct {
	l   *reluLayer[T]
	red kit.Reduced[T] // a 16-bit type to compute in (reduced.go)
}

func newReLUGPU[T layer.Float](l *reluLayer[T]) layer.Engine[T] { return &reluGPU[T]{l: l} }

// Forward computes the activation on the device.
func (e *reluGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	x, y := g.Data(bottom[0]), g.MutableData(top[0])
	var a cuda.Args
	kit.ScalarArg(a.Int(n).Ptr(x).Ptr(y), l.slope)
	if kit.VectorAligned(x, y) {
		return launch[T](l.Context(), "relu.cu", "relu_forward_vec", kit.VectorThreads[T](n), &a)
	}
	return launch[T](l.Context(), "relu.cu", "relu_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e *reluGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	if e.red.On() {
		return e.backwardReduced(top, bottom)
	}
	g := l.GPU()
	n := bottom[0].Count()
	dy, x, dx := g.Diff(top[0]), g.Data(bottom[0]), g.MutableDiff(bottom[0])
	var a cuda.Args
	kit.ScalarArg(a.Int(n).Ptr(dy).Ptr(x).Ptr(dx), l.slope)
	if kit.VectorAligned(dy, x, dx) {
		return launch[T](l.Context(), "relu.cu", "relu_backward_vec", kit.VectorThreads[T](n), &a)
	}
	return launch[T](l.Context(), "relu.cu", "relu_backward", n, &a)
}
