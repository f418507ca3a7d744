package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU computes the step on the device.
func (l *Threshold[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := l.gpu()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, "threshold.cu", "threshold_forward", n, scalarArg(&a, l.threshold))
}

// BackwardGPU fails if the bottom's gradient is asked for.
func (l *Threshold[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return l.BackwardCPU(top, propagateDown, bottom)
}
