//go:build cuda

package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes the activation on the device, keeping the sigmoid
// for the backward pass.
func (l *Swish[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	if l.sigBlob == nil {
		var err error
		if l.sigBlob, err = l.NewBlob(); err != nil {
			return err
		}
	}
	if err := l.sigBlob.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0])).Ptr(g.mutableData(l.sigBlob))
	return launch[T](l.dev, "swish.cu", "swish_forward", n, scalarArg(&a, l.beta))
}

// BackwardGPU computes the bottom's gradient on the device.
func (l *Swish[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.data(top[0])).Ptr(g.data(l.sigBlob)).Ptr(g.mutableDiff(bottom[0]))
	return launch[T](l.dev, "swish.cu", "swish_backward", n, scalarArg(&a, l.beta))
}
