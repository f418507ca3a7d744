//go:build cuda

package layer

import (
	"errors"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// checkIndices checks the indices on the host: a bad one must not reach a
// kernel.
func (l *Embed[T]) checkIndices(b *blob.Blob[T]) error {
	for i, v := range b.CPUData() {
		if _, err := l.index(v, i); err != nil {
			return err
		}
	}
	return nil
}

// ForwardGPU gathers the rows on the device (and adds the bias through a
// ones vector).
func (l *Embed[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	if err := l.checkIndices(bottom[0]); err != nil {
		return err
	}
	g := gpuOf(&l.Base)
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.data(l.blobs[0])).Ptr(g.mutableData(top[0])).Int(l.n)
	if err := launch[T](l.dev, "embed.cu", "embed_forward", n, &a); err != nil {
		return err
	}
	if !l.biasTerm {
		return nil
	}
	m := bottom[0].Count()
	if err := l.ensureOnes(&l.ones, m); err != nil {
		return err
	}
	g.Gemm(blas.NoTrans, blas.NoTrans, m, l.n, 1, 1, g.data(l.ones), g.data(l.blobs[1]), 1, g.mutableData(top[0]))
	return g.Err()
}

// BackwardGPU accumulates the weight rows' gradients (atomically, as rows
// may repeat) and the bias's on the device.
func (l *Embed[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[0] {
		return errors.New("can't propagate to EmbedLayer input")
	}
	g := gpuOf(&l.Base)
	if l.ParamPropagateDown(0) {
		n := top[0].Count()
		var a cuda.Args
		a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.diff(top[0])).Ptr(g.mutableDiff(l.blobs[0])).Int(l.n)
		if err := launch[T](l.dev, "embed.cu", "embed_backward", n, &a); err != nil {
			return err
		}
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		m := bottom[0].Count()
		if err := l.ensureOnes(&l.ones, m); err != nil {
			return err
		}
		g.Gemv(blas.Trans, m, l.n, 1, g.diff(top[0]), g.data(l.ones), 1, g.mutableDiff(l.blobs[1]))
	}
	return g.Err()
}
