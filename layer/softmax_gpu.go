package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU runs one thread per (outer, inner) position over its channels.
func (l *Softmax[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	var a cuda.Args
	n := l.outer * l.inner
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0]))
	return launch[T](l.dev, "softmax.cu", "softmax_forward", n, &a)
}

// BackwardGPU computes the gradient, one thread per position.
func (l *Softmax[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	var a cuda.Args
	n := l.outer * l.inner
	a.Int(n).Int(l.channels).Int(l.inner).Ptr(g.data(top[0])).Ptr(g.diff(top[0])).Ptr(g.mutableDiff(bottom[0]))
	return launch[T](l.dev, "softmax.cu", "softmax_backward", n, &a)
}
