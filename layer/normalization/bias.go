package normalization

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Bias",
		New32: newBias[float32], New64: newBias[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newBiasGPU[float32], newBiasGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Bias adds a vector broadcast over the bottom: top = x + b, with b's axes
// lining up with the bottom's from bias_param.axis (default 1). b is a
// learnable blob of shape bottom.shape[axis : axis+num_axes] (num_axes
// default 1, -1 for all remaining axes, 0 for a scalar), filled by
// bias_param.filler (default constant 0), or the second bottom. It works in
// place.
type biasLayer[T layer.Float] struct {
	layer.Base[T]
	shape kit.BroadcastShape
	buf   kit.BroadcastBuffers[T]
}

func newBias[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &biasLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Bias".
func (*biasLayer[T]) Type() string { return "Bias" }

// Counts returns the data and optionally the bias in, one top out.
func (*biasLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Between(1, 2), Top: layer.Exactly(1)}
}

// LayerSetUp creates and fills the learnable bias (one bottom), unless it
// came with the model.
func (l *biasLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if len(bottom) == 2 {
		if len(l.Blobs()) > 0 {
			return fmt.Errorf("the bias is bottom[1], so the layer has no learnable blobs; the model gives %d", len(l.Blobs()))
		}
		return nil
	}
	bp := l.Param().GetBiasParam()
	shape, err := kit.LearnedVectorShape("bias", bottom[0], int(bp.GetAxis()), int(bp.GetNumAxes()))
	if err != nil {
		return err
	}
	if len(l.Blobs()) > 0 {
		return l.CheckParamShapes([]string{"bias"}, shape)
	}
	b, err := l.NewParamBlob(bp.GetFiller(), shape...)
	if err != nil {
		return fmt.Errorf("bias filler: %w", err)
	}
	l.AddBlob(b)
	return nil
}

// vector returns the bias: bottom[1] or the learnable blob.
func (l *biasLayer[T]) vector(bottom []*blob.Blob[T]) *blob.Blob[T] {
	if len(bottom) == 2 {
		return bottom[1]
	}
	return l.Blobs()[0]
}

// Reshape checks the bias against the bottom and sizes the top.
func (l *biasLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if len(bottom) == 1 && len(l.Blobs()) == 0 {
		return errors.New("no bias blob: the layer is not set up")
	}
	s, err := kit.BroadcastGeometry("bias", bottom[0], l.vector(bottom), int(l.Param().GetBiasParam().GetAxis()))
	if err != nil {
		return err
	}
	l.shape = s
	if top[0] != bottom[0] {
		if err := top[0].ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	return l.buf.Reshape(&l.Base, s)
}

// ForwardCPU adds the bias on the host.
func (l *biasLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return biasLayerForward[T](l, kit.HostBroadcaster[T]{HostView: device.Host[T](l.Context())}, bottom, top)
}

// BackwardCPU computes the gradients on the host.
func (l *biasLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return biasLayerBackward[T](l, kit.HostBroadcaster[T]{HostView: device.Host[T](l.Context())}, top, propagateDown, bottom)
}

func biasLayerForward[T layer.Float, A any](l *biasLayer[T], d kit.Broadcaster[T, A], bottom, top []*blob.Blob[T]) error {
	x := d.Data(bottom[0])
	if err := addBias(d, l.shape, x, d.Data(l.vector(bottom)), d.MutableData(top[0])); err != nil {
		return err
	}
	return d.Err()
}

func biasLayerBackward[T layer.Float, A any](l *biasLayer[T], d kit.Broadcaster[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	dy := d.Diff(top[0])
	// In place, the bottom's diff is the top's: nothing to do.
	if propagateDown[0] && bottom[0] != top[0] {
		d.Copy(bottom[0].Count(), dy, d.MutableDiff(bottom[0]))
	}
	if len(bottom) == 2 && propagateDown[1] {
		biasGradient(d, l.shape, &l.buf, dy, 0, d.MutableDiff(bottom[1]))
	}
	if len(bottom) == 1 && l.ParamPropagateDown(0) {
		biasGradient(d, l.shape, &l.buf, dy, 1, d.MutableDiff(l.Blobs()[0]))
	}
	return d.Err()
}

// addBias computes y = x + b broadcast as s says (x may be y). It is the
// Bias arithmetic, shared with Scale's bias term.
func addBias[T layer.Float, A any](d kit.Broadcaster[T, A], s kit.BroadcastShape, x, b, y A) error {
	return d.Broadcast(kit.BroadcastAdd, s.Count(), s.Dim, s.Inner, x, b, y)
}

// biasGradient computes the bias gradient from the top diff dy:
// db = beta*db + sum of dy over outer and inner (beta 1 for a learnable
// bias, whose diff accumulates; 0 for a bottom).
func biasGradient[T layer.Float, A any](d device.View[T, A], s kit.BroadcastShape, bb *kit.BroadcastBuffers[T], dy A, beta T, db A) {
	kit.SumBroadcast(d, s, bb, dy, beta, db)
}
