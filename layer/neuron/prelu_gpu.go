package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// preluGPU is PReLU's GPU half.
type preluGPU[T layer.Float] struct{ l *preluLayer[T] }

func newPReLUGPU[T layer.Float](l *preluLayer[T]) layer.Engine[T] { return preluGPU[T]{l} }

// Forward applies the slopes on the device.
func (e preluGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
		return err
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.dim).Int(l.slopeDiv())
	a.Ptr(g.Data(bottom[0])).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "prelu.cu", "prelu_forward", n, &a)
}

// Backward accumulates the slopes' gradient (one block of threads per
// slope sums its elements), then computes the bottom's.
func (e preluGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	x := g.Data(l.input.input(bottom[0], top[0]))
	dy := g.Diff(top[0])
	if l.ParamPropagateDown(0) && l.num > 0 {
		slopes := l.Blobs()[0].Count()
		// Slope s scales, in each of the num items, the run of `inner`
		// elements starting at s * inner.
		inner := l.channels * l.dim / slopes
		var a cuda.Args
		a.Int(l.num).Int(l.channels * l.dim).Int(inner).Ptr(dy).Ptr(x).Ptr(g.MutableDiff(l.Blobs()[0]))
		f, err := kernel[T](l.Context(), "prelu.cu", "prelu_param_backward")
		if err != nil {
			return err
		}
		if err := f.Launch(cuda.Dim3{X: slopes}, cuda.Dim3{X: kit.ThreadsPerBlock}, 0, nil, &a); err != nil {
			return err
		}
	}
	if !propagateDown[0] {
		return nil
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.channels).Int(l.dim).Int(l.slopeDiv())
	a.Ptr(dy).Ptr(x).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "prelu.cu", "prelu_backward", n, &a)
}
