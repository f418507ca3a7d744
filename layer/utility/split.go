package utility

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Split",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newSplit[float32], New64: newSplit[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newSplitGPU[float32], newSplitGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXAlias,
	})
}

// Split hands its bottom to several consumers: every top shares the
// bottom's data, and the backward pass sums the tops' diffs into the
// bottom's. Nets insert it wherever one blob feeds several layers.
type splitLayer[T layer.Float] struct {
	layer.Base[T]
	host splitSumHost[T]
}

func newSplit[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &splitLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Split".
func (*splitLayer[T]) Type() string { return "Split" }

// Counts returns one bottom and one or more tops.
func (*splitLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.AtLeast(1)}
}

// LayerSetUp has nothing to do.
func (*splitLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// errTopIsBottom is the error of a layer that cannot run in place.
var errTopIsBottom = errors.New("does not allow in-place computation (a top is the bottom)")

// Reshape gives every top the bottom's shape and data. A top that were the
// bottom itself would have its diff overwritten by the sum, so in-place use
// is refused.
func (*splitLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	for _, t := range top {
		if t == bottom[0] {
			return errTopIsBottom
		}
		if err := t.ReshapeLike(bottom[0]); err != nil {
			return err
		}
		if err := t.ShareData(bottom[0]); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU has nothing to do: the tops share the bottom's data.
func (*splitLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU sums the tops' diffs into the bottom's, block by block on
// the cores (splitSumHost).
func (l *splitLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l.host.backward(top, bottom[0])
	return nil
}

func splitBackward[T layer.Float, A any](d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	n := bottom[0].Count()
	dx := d.MutableDiff(bottom[0])
	if len(top) == 1 {
		d.Copy(n, d.Diff(top[0]), dx)
		return d.Err()
	}
	d.Add(n, d.Diff(top[0]), d.Diff(top[1]), dx)
	for _, t := range top[2:] {
		d.Axpy(n, 1, d.Diff(t), dx)
	}
	return d.Err()
}
