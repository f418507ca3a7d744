package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// upsampleGPU is Upsample's GPU half. Positions outside the output plane
// (which the CPU half reports as an error) are skipped on the device,
// where checking them would cost a synchronisation.
type upsampleGPU[T layer.Float] struct{ l *upsampleLayer[T] }

func newUpsampleGPU[T layer.Float](l *upsampleLayer[T]) layer.Engine[T] { return upsampleGPU[T]{l} }

// Forward scatters the values to their positions on the device.
func (e upsampleGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	g.Set(top[0].Count(), 0, g.MutableData(top[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(bottom[0].CountFrom(2)).Int(l.h * l.w).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "upsample.cu", "upsample_forward", n, &a)
}

// Backward gathers the gradients from the positions on the device.
func (e upsampleGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(bottom[0].CountFrom(2)).Int(l.h * l.w).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "upsample.cu", "upsample_backward", n, &a)
}
