package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// sliceGPU is Slice's GPU half.
type sliceGPU[T layer.Float] struct{ l *sliceLayer[T] }

func newSliceGPU[T layer.Float](l *sliceLayer[T]) layer.Engine[T] { return sliceGPU[T]{l} }

// Forward copies each top's range of the bottom on the device, with
// Concat's kernel.
func (e sliceGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if len(top) == 1 {
		return nil
	}
	g := l.GPU()
	x := g.Data(bottom[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: bottom[0].Shape()[l.axis]}
	for _, t := range top {
		p.partAxis = t.Shape()[l.axis]
		if err := copyAxisPartGPU[T](l.Context(), p, g.MutableData(t), x, false); err != nil {
			return err
		}
		p.offset += p.partAxis
	}
	return nil
}

// Backward puts each top's diff back into its range of the bottom's on
// the device.
func (e sliceGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] || len(top) == 1 {
		return nil
	}
	g := l.GPU()
	dx := g.MutableDiff(bottom[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: bottom[0].Shape()[l.axis]}
	for _, t := range top {
		p.partAxis = t.Shape()[l.axis]
		if err := copyAxisPartGPU[T](l.Context(), p, g.Diff(t), dx, true); err != nil {
			return err
		}
		p.offset += p.partAxis
	}
	return nil
}
