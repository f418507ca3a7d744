//go:build cuda

package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU clips on the device.
func (l *Clip[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0]))
	return launch[T](l.dev, "clip.cu", "clip_forward", n, scalarArg(scalarArg(&a, l.lo), l.hi))
}

// BackwardGPU passes the gradient inside [min, max] on the device.
func (l *Clip[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.data(bottom[0])).Ptr(g.mutableDiff(bottom[0]))
	return launch[T](l.dev, "clip.cu", "clip_backward", n, scalarArg(scalarArg(&a, l.lo), l.hi))
}
