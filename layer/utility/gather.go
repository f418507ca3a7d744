package utility

import (
	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Gather",
		New32: newGather[float32], New64: newGather[float64],
		CUDAGraph: true, // neither pass does any work, on either device
		Engines:   []layer.EngineDef{layer.GPUEngine(newGatherGPU[float32], newGatherGPU[float64])},
		ONNX:      layer.ONNXAlias,
		NoGolden:  "BVLC Caffe has no such layer: it is TSN's (yjxiong/caffe)",
	})
}

// Gather is the layer of TSN's Caffe fork (yjxiong/caffe) that its fast
// VGG-16 nets put after pool5, so that with the fork's MPI training the
// fully connected layers see every process's batch: each top gathers its
// bottom from all processes along axis 0, and the backward pass scatters
// the diff back, scaled by the number of processes.
//
// Outside MPI the fork's layer is the identity: each top shares its
// bottom's data and diff, as here. gocaffe's data-parallel training
// (docs/multi-gpu.md) keeps each rank's own batch and averages the
// gradients instead, which gives the fork's update for every layer
// without batch statistics after the gather (the fork's fast nets have
// none there: their fully connected layers, dropout and the loss).
type gatherLayer[T layer.Float] struct{ layer.Base[T] }

func newGather[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &gatherLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Gather".
func (*gatherLayer[T]) Type() string { return "Gather" }

// Counts returns one top for each of one or more bottoms.
func (*gatherLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(1), Top: layer.AtLeast(1), EqualBottomTop: true}
}

// LayerSetUp has nothing to do.
func (*gatherLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape makes each top a view of its bottom: same shape, same data and
// diff memory.
func (*gatherLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	for i, b := range bottom {
		if err := top[i].ReshapeLike(b); err != nil {
			return err
		}
		if err := shareDataAndDiff(top[i], b); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU has nothing to do: each top shares its bottom's data.
func (*gatherLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU has nothing to do: each top shares its bottom's diff.
func (*gatherLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
