package utility

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// checkIndices checks the indices on the host: a bad one must not reach a
// kernel.
func (l *embedLayer[T]) checkIndices(b *blob.Blob[T]) error {
	for i, v := range b.CPUData() {
		if _, err := l.index(v, i); err != nil {
			return err
		}
	}
	return nil
}

// embedGPU is Embed's GPU half.
type embedGPU[T layer.Float] struct{ l *embedLayer[T] }

func newEmbedGPU[T layer.Float](l *embedLayer[T]) layer.Engine[T] { return embedGPU[T]{l} }

// Forward gathers the rows on the device (and adds the bias through a
// ones vector).
func (e embedGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if err := l.checkIndices(bottom[0]); err != nil {
		return err
	}
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableData(top[0])).Int(l.n)
	if err := launch[T](l.Context(), "embed.cu", "embed_forward", n, &a); err != nil {
		return err
	}
	if !l.biasTerm {
		return nil
	}
	m := bottom[0].Count()
	if err := kit.Ones(l, &l.ones, m); err != nil {
		return err
	}
	g.Gemm(blas.NoTrans, blas.NoTrans, m, l.n, 1, 1, g.Data(l.ones), g.Data(l.Blobs()[1]), 1, g.MutableData(top[0]))
	return g.Err()
}

// Backward accumulates the weight rows' gradients (atomically, as rows
// may repeat) and the bias's on the device.
func (e embedGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[0] {
		return errors.New("can't propagate to EmbedLayer input")
	}
	g := l.GPU()
	if l.ParamPropagateDown(0) {
		n := top[0].Count()
		var a cuda.Args
		a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(l.Blobs()[0])).Int(l.n)
		if err := launch[T](l.Context(), "embed.cu", "embed_backward", n, &a); err != nil {
			return err
		}
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		m := bottom[0].Count()
		if err := kit.Ones(l, &l.ones, m); err != nil {
			return err
		}
		g.Gemv(blas.Trans, m, l.n, 1, g.Diff(top[0]), g.Data(l.ones), 1, g.MutableDiff(l.Blobs()[1]))
	}
	return g.Err()
}
