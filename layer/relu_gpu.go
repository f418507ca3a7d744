package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes the activation on the device.
func (l *ReLU[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	scalarArg(a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0])), l.slope)
	return launch[T](l.ctx, "relu.cu", "relu_forward", n, &a)
}

// BackwardGPU computes the bottom's gradient on the device.
func (l *ReLU[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, "relu.cu", "relu_backward", n, scalarArg(&a, l.slope))
}
