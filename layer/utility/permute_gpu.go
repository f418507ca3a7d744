package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// permuteGPU is Permute's GPU half.
type permuteGPU[T layer.Float] struct{ l *permuteLayer[T] }

func newPermuteGPU[T layer.Float](l *permuteLayer[T]) layer.Engine[T] { return permuteGPU[T]{l} }

// run copies between the layouts (x the bottom's, y the top's; backward
// writes x), the kernels' struct PermuteSteps passed by value.
func (e permuteGPU[T]) run(x, y cuda.DevicePtr, n int, backward bool) error {
	l := e.l
	const m = blob.MaxAxes
	var steps [1 + 2*m]int32
	steps[0] = int32(len(l.order))
	for i := range l.order {
		steps[1+i], steps[1+m+i] = int32(l.oldSteps[i]), int32(l.newSteps[i])
	}
	var a cuda.Args
	a.Int(n).Int32s(steps[:]).Ptr(x).Ptr(y).Int(kit.Btoi(backward))
	return launch[T](l.Context(), "permute.cu", "permute", n, &a)
}

// Forward reorders the data on the device.
func (e permuteGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	g := e.l.GPU()
	return e.run(g.Data(bottom[0]), g.MutableData(top[0]), top[0].Count(), false)
}

// Backward reorders the gradient back on the device.
func (e permuteGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := e.l.GPU()
	return e.run(g.MutableDiff(bottom[0]), g.Diff(top[0]), top[0].Count(), true)
}
