package vision

import (
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// interpGPU is Interp's GPU half; rows and cols hold the layer's taps
// (first index, step, weight) on the device, uploaded when they change.
type interpGPU[T layer.Float] struct {
	l               *interpLayer[T]
	rows, cols      *blob.Blob[T]
	rowTaps, colTap []interpTap // what rows and cols hold
}

func newInterpGPU[T layer.Float](l *interpLayer[T]) layer.Engine[T] { return &interpGPU[T]{l: l} }

// taps uploads the layer's taps if they changed since the last pass.
func (e *interpGPU[T]) taps() error {
	l := e.l
	for _, t := range []struct {
		b    **blob.Blob[T]
		have *[]interpTap
		want []interpTap
	}{{&e.rows, &e.rowTaps, l.rowWeights}, {&e.cols, &e.colTap, l.colWeights}} {
		if *t.b != nil && slices.Equal(*t.have, t.want) {
			continue
		}
		if err := kit.EnsureBlob(&l.Base, t.b); err != nil {
			return err
		}
		if err := (*t.b).Reshape([]int{3 * len(t.want)}); err != nil {
			return err
		}
		v := (*t.b).MutableCPUData()
		for i, tap := range t.want {
			v[3*i], v[3*i+1], v[3*i+2] = T(tap.at), T(tap.step), T(tap.weight)
		}
		*t.have = append((*t.have)[:0], t.want...)
	}
	return nil
}

func (e *interpGPU[T]) args(a *cuda.Args, n int) *cuda.Args {
	l, g := e.l, e.l.GPU()
	return a.Int(n).Int(l.inH).Int(l.inW).Int(l.outH).Int(l.outW).Ptr(g.Data(e.rows)).Ptr(g.Data(e.cols))
}

// Forward interpolates on the device.
func (e *interpGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	if err := e.taps(); err != nil {
		return err
	}
	n := l.planes * l.outH * l.outW
	var a cuda.Args
	e.args(&a, n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "interp.cu", "interp_forward", n, &a)
}

// Backward spreads each output's gradient over its four sources on the
// device (atomically: sources are shared).
func (e *interpGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.GPU()
	if err := e.taps(); err != nil {
		return err
	}
	g.Set(bottom[0].Count(), 0, g.MutableDiff(bottom[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := l.planes * l.outH * l.outW
	var a cuda.Args
	e.args(&a, n).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "interp.cu", "interp_backward", n, &a)
}
