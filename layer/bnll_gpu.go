package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes the softplus on the device.
func (l *BNLL[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0]))
	return launch[T](l.dev, "bnll.cu", "bnll_forward", n, &a)
}

// BackwardGPU computes the bottom's gradient on the device.
func (l *BNLL[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.data(l.input.input(bottom[0], top[0]))).Ptr(g.mutableDiff(bottom[0]))
	return launch[T](l.dev, "bnll.cu", "bnll_backward", n, &a)
}
