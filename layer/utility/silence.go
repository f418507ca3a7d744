package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Silence",
		New32: newSilence[float32], New64: newSilence[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newSilenceGPU[float32], newSilenceGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXDropped, ONNXWhy: "computes nothing",
	})
}

// Silence consumes blobs that nothing else uses, so that the net does not
// report them as outputs. It has no tops; its backward pass gives its
// bottoms a zero gradient.
type silenceLayer[T layer.Float] struct{ layer.Base[T] }

func newSilence[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &silenceLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Silence".
func (*silenceLayer[T]) Type() string { return "Silence" }

// Counts returns one or more bottoms and no tops.
func (*silenceLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(1), Top: layer.Exactly(0)}
}

// LayerSetUp has nothing to do.
func (*silenceLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape has nothing to do.
func (*silenceLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU has nothing to do.
func (*silenceLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU zeroes the diffs of the bottoms that propagate.
func (*silenceLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return kit.ZeroPropagatedDiffs[T](device.HostView[T]{}, propagateDown, bottom)
}
