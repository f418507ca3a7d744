package utility

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Flatten",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newFlatten[float32], New64: newFlatten[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newFlattenGPU[float32], newFlattenGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Flatten collapses the axes flatten_param.axis (default 1) to end_axis
// (default -1, the last) into one. The top is a view of the bottom: it
// shares its data and diff, so neither pass computes anything.
type flattenLayer[T layer.Float] struct {
	layer.Base[T]
	shape []int // the top's shape, kept to avoid allocating per pass
}

func newFlatten[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &flattenLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Flatten".
func (*flattenLayer[T]) Type() string { return "Flatten" }

// Counts returns one bottom and one top.
func (*flattenLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do.
func (*flattenLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape makes the top the flattened view of the bottom. In place, the
// bottom itself would change shape, so that is refused.
func (l *flattenLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if top[0] == bottom[0] {
		return errTopIsBottom
	}
	fp := l.Param().GetFlattenParam()
	b := bottom[0]
	start, err := b.CanonicalAxisIndex(int(fp.GetAxis()))
	if err != nil {
		return fmt.Errorf("flatten_param.axis: %w", err)
	}
	end, err := b.CanonicalAxisIndex(int(fp.GetEndAxis()))
	if err != nil {
		return fmt.Errorf("flatten_param.end_axis: %w", err)
	}
	if end < start {
		return fmt.Errorf("flatten_param.end_axis %d (axis %d of %s) comes before axis %d (axis %d)",
			fp.GetEndAxis(), end, b.ShapeString(), fp.GetAxis(), start)
	}
	l.shape = append(l.shape[:0], b.Shape()[:start]...)
	l.shape = append(l.shape, b.CountRange(start, end+1))
	l.shape = append(l.shape, b.Shape()[end+1:]...)
	if err := top[0].Reshape(l.shape); err != nil {
		return err
	}
	return shareDataAndDiff(top[0], b)
}

// ForwardCPU has nothing to do: the top shares the bottom's data.
func (*flattenLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU has nothing to do: the top shares the bottom's diff.
func (*flattenLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
