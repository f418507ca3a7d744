package datalayer

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Input",
		New32: newInput[float32], New64: newInput[float64],
		ONNX: layer.ONNXInput,
	})
}

// Input declares a net's input blobs: it has no bottoms, shapes its tops
// once from input_param.shape (one shape for every top, one per top, or
// none, leaving the caller to shape them) and computes nothing. The caller
// writes the data into the tops.
type inputLayer[T layer.Float] struct{ layer.Base[T] }

func newInput[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &inputLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Input".
func (*inputLayer[T]) Type() string { return "Input" }

// Counts returns no bottoms and one or more tops.
func (*inputLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.AtLeast(1)}
}

// LayerSetUp shapes the tops.
func (l *inputLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	shapes := l.Param().GetInputParam().GetShape()
	if len(shapes) > 1 && len(shapes) != len(top) {
		return fmt.Errorf("input_param.shape must be specified once, once per top blob, or not at all: %d tops vs. %d shapes", len(top), len(shapes))
	}
	if len(shapes) == 0 {
		return nil
	}
	for i, t := range top {
		s := shapes[0]
		if len(shapes) > 1 {
			s = shapes[i]
		}
		if err := t.ReshapeProto(s); err != nil {
			return fmt.Errorf("input_param.shape for top %d: %w", i, err)
		}
	}
	return nil
}

// Reshape has nothing to do: the tops keep the shape they were given.
func (*inputLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU has nothing to do: the caller fills the tops.
func (*inputLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU has nothing to do: there are no bottoms.
func (*inputLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
