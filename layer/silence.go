package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	MustRegisterType(Spec{
		Type:  "Silence",
		New32: newSilence[float32], New64: newSilence[float64],
		Engines:   []EngineDef{GPUEngine(newSilenceGPU[float32], newSilenceGPU[float64])},
		CUDAGraph: true,
		ONNX:      ONNXDropped, ONNXWhy: "computes nothing",
	})
}

// Silence consumes blobs that nothing else uses, so that the net does not
// report them as outputs. It has no tops; its backward pass gives its
// bottoms a zero gradient.
type Silence[T Float] struct{ Base[T] }

func newSilence[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &Silence[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Silence".
func (*Silence[T]) Type() string { return "Silence" }

// Counts returns one or more bottoms and no tops.
func (*Silence[T]) Counts() BlobCounts { return BlobCounts{Bottom: AtLeast(1), Top: Exactly(0)} }

// LayerSetUp has nothing to do.
func (*Silence[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape has nothing to do.
func (*Silence[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU has nothing to do.
func (*Silence[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU zeroes the diffs of the bottoms that propagate.
func (*Silence[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return kit.ZeroPropagatedDiffs[T](device.HostView[T]{}, propagateDown, bottom)
}
