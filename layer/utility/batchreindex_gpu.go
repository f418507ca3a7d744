package utility

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// batchReindexGPU is BatchReindex's GPU half.
type batchReindexGPU[T layer.Float] struct{ l *batchReindexLayer[T] }

func newBatchReindexGPU[T layer.Float](l *batchReindexLayer[T]) layer.Engine[T] {
	return batchReindexGPU[T]{l}
}

// Forward gathers the items on the device (the indices are checked on
// the host first).
func (e batchReindexGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if err := checkIndices(bottom[1].CPUData(), bottom[0].Shape()[0]); err != nil {
		return err
	}
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableData(top[0])).Int(bottom[0].CountFrom(1))
	return launch[T](l.Context(), "batch_reindex.cu", "batch_reindex_forward", n, &a)
}

// Backward sums each top item's gradient into its source item on the
// device.
func (e batchReindexGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[1] {
		return errors.New("cannot backprop to index")
	}
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	g.Set(bottom[0].Count(), 0, g.MutableDiff(bottom[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0])).Int(bottom[0].CountFrom(1))
	return launch[T](l.Context(), "batch_reindex.cu", "batch_reindex_backward", n, &a)
}
