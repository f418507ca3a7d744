package utility

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "BatchReindex",
		New32: newBatchReindex[float32], New64: newBatchReindex[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newBatchReindexGPU[float32], newBatchReindexGPU[float64])},
		ONNX:    layer.ONNXConverted,
	})
}

// BatchReindex selects items of its first bottom by the indices in its
// second (a 1-D blob): top item i is bottom item permut[i] (Caffe's
// BatchReindexLayer). Indices may repeat or skip items; the gradient of an
// item is the sum over its copies. The indices get no gradient.
type batchReindexLayer[T layer.Float] struct {
	layer.Base[T]
	shape []int
}

func newBatchReindex[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &batchReindexLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "BatchReindex".
func (*batchReindexLayer[T]) Type() string { return "BatchReindex" }

// Counts returns data and indices in, one top.
func (*batchReindexLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// AllowForceBackward refuses the indices.
func (*batchReindexLayer[T]) AllowForceBackward(i int) bool { return i != 1 }

// LayerSetUp has nothing to do.
func (*batchReindexLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top: one item per index.
func (l *batchReindexLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[1].NumAxes() != 1 {
		return fmt.Errorf("the indices must be a 1-D blob, got %s", bottom[1].ShapeString())
	}
	if bottom[0].NumAxes() == 0 {
		return errors.New("the data needs a first (batch) axis")
	}
	l.shape = append(append(l.shape[:0], bottom[1].Shape()[0]), bottom[0].Shape()[1:]...)
	return top[0].Reshape(l.shape)
}

// indices checks and converts the indices.
func checkIndices[T layer.Float](permut []T, n int) error {
	for i, v := range permut {
		if v < 0 {
			return fmt.Errorf("index %d for reindex layer is negative (%v)", i, v)
		}
		if int(v) >= n {
			return fmt.Errorf("index %d for reindex layer (%v) is not less than the batch size %d", i, v, n)
		}
	}
	return nil
}

// ForwardCPU copies the selected items.
func (l *batchReindexLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	permut := bottom[1].CPUData()
	if err := checkIndices(permut, bottom[0].Shape()[0]); err != nil {
		return err
	}
	inner := bottom[0].CountFrom(1)
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range permut {
		copy(y[i*inner:(i+1)*inner], x[int(v)*inner:])
	}
	return nil
}

// BackwardCPU sums each top item's gradient into its source item.
func (l *batchReindexLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return errors.New("cannot backprop to index")
	}
	if !propagateDown[0] {
		return nil
	}
	inner := bottom[0].CountFrom(1)
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	clear(dx)
	for i, v := range bottom[1].CPUData() {
		d := dx[int(v)*inner : (int(v)+1)*inner]
		for j, g := range dy[i*inner : (i+1)*inner] {
			d[j] += g
		}
	}
	return nil
}
