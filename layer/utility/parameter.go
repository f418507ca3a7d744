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
		Type:  "Parameter",
		New32: newParameter[float32], New64: newParameter[float64],
		ONNX: layer.ONNXConverted,
	})
}

// Parameter exposes a learnable blob of parameter_param.shape as its top
// (Caffe's ParameterLayer): the top shares the blob's data and diff, so
// layers above read the parameter and their gradients reach it. The blob
// starts at 0 unless a model gives it.
type parameterLayer[T layer.Float] struct{ layer.Base[T] }

func newParameter[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &parameterLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if p.GetParameterParam().GetShape() == nil {
		return nil, errors.New("parameter_param.shape must be set")
	}
	return l, nil
}

// Type returns "Parameter".
func (*parameterLayer[T]) Type() string { return "Parameter" }

// Counts returns no bottoms and one top.
func (*parameterLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(1)}
}

// LayerSetUp creates the blob (unless a model gave it).
func (l *parameterLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	dims := l.Param().GetParameterParam().GetShape().GetDim()
	shape := make([]int, len(dims))
	for i, d := range dims {
		shape[i] = int(d)
	}
	if len(l.Blobs()) > 0 {
		return l.CheckParamShapes([]string{"parameter"}, shape)
	}
	b, err := l.NewParamBlob(nil, shape...)
	if err != nil {
		return fmt.Errorf("parameter_param.shape: %w", err)
	}
	l.AddBlob(b)
	return nil
}

// Reshape shapes the top like the blob and shares its memory.
func (l *parameterLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(l.Blobs()[0]); err != nil {
		return err
	}
	if err := top[0].ShareData(l.Blobs()[0]); err != nil {
		return err
	}
	return top[0].ShareDiff(l.Blobs()[0])
}

// ForwardCPU has nothing to do: the top is the blob.
func (*parameterLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU has nothing to do: the top's diff is the blob's.
func (*parameterLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
