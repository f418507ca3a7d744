package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes the sigmoid on the device.
func (l *Sigmoid[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0]))
	return launch[T](l.dev, "sigmoid.cu", "sigmoid_forward", n, &a)
}

// BackwardGPU computes the bottom's gradient from the top on the device.
func (l *Sigmoid[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.data(top[0])).Ptr(g.mutableDiff(bottom[0]))
	return launch[T](l.dev, "sigmoid.cu", "sigmoid_backward", n, &a)
}
