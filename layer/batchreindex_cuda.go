//go:build cuda

package layer

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU gathers the items on the device (the indices are checked on
// the host first).
func (l *BatchReindex[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	if err := checkIndices(bottom[1].CPUData(), bottom[0].Shape()[0]); err != nil {
		return err
	}
	g := gpuOf(&l.Base)
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.data(bottom[1])).Ptr(g.mutableData(top[0])).Int(bottom[0].CountFrom(1))
	return launch[T](l.dev, "batch_reindex.cu", "batch_reindex_forward", n, &a)
}

// BackwardGPU sums each top item's gradient into its source item on the
// device.
func (l *BatchReindex[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return errors.New("cannot backprop to index")
	}
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	g.Set(bottom[0].Count(), 0, g.mutableDiff(bottom[0]))
	if err := g.Err(); err != nil {
		return err
	}
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.data(bottom[1])).Ptr(g.mutableDiff(bottom[0])).Int(bottom[0].CountFrom(1))
	return launch[T](l.dev, "batch_reindex.cu", "batch_reindex_backward", n, &a)
}
