package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
)

// concatGPU is Concat's GPU half.
type concatGPU[T layer.Float] struct{ l *concatLayer[T] }

func newConcatGPU[T layer.Float](l *concatLayer[T]) layer.Engine[T] { return concatGPU[T]{l} }

// count is the number of elements of the part: one kernel thread each.
func (p axisPart) count() int { return p.outer * p.partAxis * p.inner }

// copyAxisPartGPU is copyAxisPartCPU on the device: part and whole are
// device arrays, and the copy goes into whole when toWhole is set.
func copyAxisPartGPU[T layer.Float](c *device.Context, p axisPart, part, whole cuda.DevicePtr, toWhole bool) error {
	src, dst, flag := whole, part, 0
	if toWhole {
		src, dst, flag = part, whole, 1
	}
	var a cuda.Args
	a.Int(p.count()).Int(p.inner).Int(p.partAxis).Int(p.wholeAxis).Int(p.offset).Int(flag).Ptr(src).Ptr(dst)
	return launch[T](c, "concat.cu", "axis_copy", p.count(), &a)
}

// Forward copies each bottom into its range of the top on the device.
func (e concatGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if len(bottom) == 1 {
		return nil
	}
	g := l.GPU()
	out := g.MutableData(top[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for _, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		if err := copyAxisPartGPU[T](l.Context(), p, g.Data(b), out, true); err != nil {
			return err
		}
		p.offset += p.partAxis
	}
	return nil
}

// Backward hands each bottom its range of the top's diff on the device.
func (e concatGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if len(bottom) == 1 {
		return nil
	}
	g := l.GPU()
	dy := g.Diff(top[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for i, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		if propagateDown[i] {
			if err := copyAxisPartGPU[T](l.Context(), p, g.MutableDiff(b), dy, false); err != nil {
				return err
			}
		}
		p.offset += p.partAxis
	}
	return nil
}
