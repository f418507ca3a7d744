package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// lrnGPU is LRN's GPU half.
type lrnGPU[T layer.Float] struct{ l *lrnLayer[T] }

func newLRNGPU[T layer.Float](l *lrnLayer[T]) layer.Engine[T] { return lrnGPU[T]{l} }

// geomArgs packs the window geometry as the kernels' struct LRNGeom.
func (g lrnWindow) geomArgs(a *cuda.Args) *cuda.Args {
	within := int32(0)
	if g.within {
		within = 1
	}
	v := [...]int32{within, int32(g.half), int32(g.channels), int32(g.height), int32(g.width)}
	return a.Int32s(v[:])
}

// Forward normalizes on the device, one thread per element.
func (e lrnGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := bottom[0].Count()
	sumFactor, constant, _ := l.coeffs()
	var a cuda.Args
	l.window().geomArgs(a.Int(n).Ptr(g.Data(bottom[0])))
	kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, sumFactor), constant), l.beta)
	a.Ptr(g.MutableData(l.scale)).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "lrn.cu", "lrn_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e lrnGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	_, _, backFactor := l.coeffs()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(top[0])).Ptr(g.Diff(top[0])).Ptr(g.Data(l.scale))
	kit.ScalarArg(kit.ScalarArg(l.window().geomArgs(&a), backFactor), l.beta)
	a.Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "lrn.cu", "lrn_backward", n, &a)
}
