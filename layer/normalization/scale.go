package normalization

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Scale",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newScale[float32], New64: newScale[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newScaleGPU[float32], newScaleGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Scale multiplies the bottom by a vector broadcast over it: top = x * s,
// with s's axes lining up with the bottom's from scale_param.axis (default
// 1). s is a learnable blob of shape bottom.shape[axis : axis+num_axes]
// (num_axes default 1, -1 for all remaining axes, 0 for a scalar), filled
// by scale_param.filler (default constant 1), or the second bottom, which
// then gets a gradient. With bias_term a learnable bias of s's shape
// (bias_filler, default constant 0) is added, as a Bias layer would. It
// works in place.
type scaleLayer[T layer.Float] struct {
	layer.Base[T]
	biasIndex int // index of the bias among the learnable blobs, -1 if none
	shape     kit.BroadcastShape
	buf       kit.BroadcastBuffers[T]
	// temp holds the bottom when in place (backward needs it), and the
	// product dy*x in backward when no diff can hold it.
	temp *blob.Blob[T]
	// product, when a host net's memory plan asked for it (Buffers),
	// takes the product dy*x in place instead of temp, which then keeps
	// the bottom unchanged through the backward pass and may share memory
	// with an equal copy (the BatchNorm before's xNorm).
	product *blob.Blob[T]
	// back is the host backward pass over rows (scale_backward_cpu.go);
	// genericBackward makes tests run the generic one.
	back            scaleBackHost[T]
	genericBackward bool
	host            scaleHost[T]
	// fusedInput is the blob holding the bottom as the layer's forward
	// pass leaves it in temp, when the host passes of the BatchNorm before
	// compute that pass (its xNorm): a backward pass of the layer's own
	// after a fused forward pass (a partial pass splits the two) reads it.
	fusedInput *blob.Blob[T]
}

// kept returns the blob holding the bottom in place: temp, or
// fusedInput when the forward pass was the BatchNorm's.
func (l *scaleLayer[T]) kept() *blob.Blob[T] {
	if l.ForwardSkipped() && l.fusedInput != nil {
		return l.fusedInput
	}
	return l.temp
}

func newScale[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &scaleLayer[T]{biasIndex: -1}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Scale".
func (*scaleLayer[T]) Type() string { return "Scale" }

// Counts returns the data and optionally the scale in, one top out.
func (*scaleLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Between(1, 2), Top: layer.Exactly(1)}
}

// LayerSetUp creates and fills the learnable scale (one bottom) and bias
// (bias_term) that did not come with the model. As in Caffe, a model's
// blobs are the scale (one bottom) then the bias; a missing bias is filled.
func (l *scaleLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	sp := l.Param().GetScaleParam()
	want := 0
	if len(bottom) == 1 {
		want++
	}
	if sp.GetBiasTerm() {
		want++
	}
	if len(l.Blobs()) > want {
		return fmt.Errorf("incorrect number of learnable blobs: the model gives %d, the layer has %d (scale from a bottom: %v, bias_term: %v)",
			len(l.Blobs()), want, len(bottom) == 2, sp.GetBiasTerm())
	}
	var err error
	if l.temp, err = l.NewBlob(); err != nil {
		return err
	}
	vecShape, err := l.setUpScale(bottom, sp)
	if err != nil {
		return err
	}
	if !sp.GetBiasTerm() {
		return nil
	}
	if len(l.Blobs()) < want {
		b, err := l.NewParamBlob(sp.GetBiasFiller(), vecShape...)
		if err != nil {
			return fmt.Errorf("bias filler: %w", err)
		}
		l.AddBlob(b)
	}
	l.biasIndex = len(l.Blobs()) - 1
	return nil
}

// setUpScale creates the learnable scale if there is one to create and
// returns the shape of the scale vector (which the bias shares).
func (l *scaleLayer[T]) setUpScale(bottom []*blob.Blob[T], sp *caffepb.ScaleParameter) ([]int, error) {
	if len(bottom) == 2 {
		return slices.Clone(bottom[1].Shape()), nil
	}
	if len(l.Blobs()) > 0 {
		return slices.Clone(l.Blobs()[0].Shape()), nil
	}
	shape, err := kit.LearnedVectorShape("scale", bottom[0], int(sp.GetAxis()), int(sp.GetNumAxes()))
	if err != nil {
		return nil, err
	}
	fp := sp.GetFiller()
	if fp == nil {
		// Identity by default.
		fp = &caffepb.FillerParameter{Type: proto.String("constant"), Value: proto.Float32(1)}
	}
	s, err := l.NewParamBlob(fp, shape...)
	if err != nil {
		return nil, fmt.Errorf("scale filler: %w", err)
	}
	l.AddBlob(s)
	return shape, nil
}

// vector returns the scale: bottom[1] or the learnable blob.
func (l *scaleLayer[T]) vector(bottom []*blob.Blob[T]) *blob.Blob[T] {
	if len(bottom) == 2 {
		return bottom[1]
	}
	return l.Blobs()[0]
}

// Reshape checks the scale (and bias) against the bottom and sizes the top
// and the buffers.
func (l *scaleLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if l.temp == nil {
		return errors.New("the layer is not set up")
	}
	vec := l.vector(bottom)
	s, err := kit.BroadcastGeometry("scale", bottom[0], vec, int(l.Param().GetScaleParam().GetAxis()))
	if err != nil {
		return err
	}
	if l.biasIndex >= 0 && !slices.Equal(l.Blobs()[l.biasIndex].Shape(), vec.Shape()) {
		return fmt.Errorf("bias shape %s differs from the scale's %s", l.Blobs()[l.biasIndex].ShapeString(), vec.ShapeString())
	}
	l.shape = s
	if top[0] != bottom[0] {
		if err := top[0].ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	// Memory is allocated on first use, so sizing temp costs nothing when
	// it is not needed.
	if err := l.temp.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if l.product != nil {
		if err := l.product.ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	return l.buf.Reshape(&l.Base, s)
}

// ForwardCPU scales on the host.
func (l *scaleLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.host.forward(l, bottom, top)
	return nil
}

// BackwardCPU computes the gradients on the host.
func (l *scaleLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !l.genericBackward && l.backwardFast(top, propagateDown, bottom) {
		return nil
	}
	return scaleBackward[T](l, kit.HostBroadcaster[T]{HostView: device.Host[T](l.Context())}, top, propagateDown, bottom)
}

func scaleForward[T layer.Float, A any](l *scaleLayer[T], d kit.Broadcaster[T, A], bottom, top []*blob.Blob[T]) error {
	n := bottom[0].Count()
	x := d.Data(bottom[0])
	if bottom[0] == top[0] {
		// Backward needs x, which the output is about to replace.
		d.Copy(n, x, d.MutableData(l.temp))
	}
	y := d.MutableData(top[0])
	if err := d.Broadcast(kit.BroadcastMul, n, l.shape.Dim, l.shape.Inner, x, d.Data(l.vector(bottom)), y); err != nil {
		return err
	}
	if l.biasIndex >= 0 {
		if err := addBias(d, l.shape, y, d.Data(l.Blobs()[l.biasIndex]), y); err != nil {
			return err
		}
	}
	return d.Err()
}

// scaleBackward computes, in this order because in place the bottom's diff
// is the top's: the bias gradient, the scale gradient (sum over outer and
// inner of dy*x), then dx = dy*s.
func scaleBackward[T layer.Float, A any](l *scaleLayer[T], d kit.Broadcaster[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	dy := d.Diff(top[0])
	if l.biasIndex >= 0 && l.ParamPropagateDown(l.biasIndex) {
		biasGradient(d, l.shape, &l.buf, dy, 1, d.MutableDiff(l.Blobs()[l.biasIndex]))
	}
	vec := l.vector(bottom)
	fromBottom := len(bottom) == 2
	if (fromBottom && propagateDown[1]) || (!fromBottom && l.ParamPropagateDown(0)) {
		scaleGradient[T](l, d, dy, propagateDown[0], bottom[0], top[0], vec, !fromBottom)
	}
	if propagateDown[0] {
		n := bottom[0].Count()
		if err := d.Broadcast(kit.BroadcastMul, n, l.shape.Dim, l.shape.Inner, dy, d.Data(vec), d.MutableDiff(bottom[0])); err != nil {
			return err
		}
	}
	return d.Err()
}

// scaleGradient adds (learnable scale) or assigns (bottom scale) the sum
// over outer and inner of dy*x to the scale's diff. The product dy*x goes
// to the bottom's diff when dx overwrites it afterwards, else to temp
// (which in place holds x: each element is read before it is replaced).
func scaleGradient[T layer.Float, A any](l *scaleLayer[T], d device.View[T, A], dy A, dxWanted bool, bottom, top, vec *blob.Blob[T], learnable bool) {
	n := bottom.Count()
	inPlace := bottom == top
	x := d.Data(bottom)
	if inPlace {
		x = d.Data(l.kept())
	}
	var product A
	switch {
	case dxWanted && !inPlace:
		product = d.MutableDiff(bottom)
	case l.product != nil:
		product = d.MutableData(l.product)
	default:
		product = d.MutableData(l.temp)
	}
	d.Mul(n, dy, x, product)
	var beta T
	if learnable {
		beta = 1
	}
	kit.SumBroadcast(d, l.shape, &l.buf, product, beta, d.MutableDiff(vec))
}

// Buffers lists, for a host net's memory plan, temp's data: in place, the
// bottom kept from the forward pass for the backward pass, a copy of the
// bottom before the pass which the backward pass leaves unchanged (the
// product it needs goes to a scratch blob, product, from now on); else
// the backward pass's scratch.
func (l *scaleLayer[T]) Buffers(bottom, top []*blob.Blob[T]) []layer.Buffer[T] {
	if bottom[0] != top[0] {
		return []layer.Buffer[T]{{Name: "temp", Blob: l.temp, Data: layer.BufferBackwardScratch}}
	}
	if l.product == nil {
		p, err := l.NewBlob()
		if err != nil || p.ReshapeLike(bottom[0]) != nil {
			return []layer.Buffer[T]{{Name: "temp", Blob: l.temp, Data: layer.BufferSaved}}
		}
		l.product = p
	}
	return []layer.Buffer[T]{
		{Name: "temp", Blob: l.temp, Data: layer.BufferSaved, Copy: layer.CopyOfBottomBefore},
		{Name: "product", Blob: l.product, Data: layer.BufferBackwardScratch},
	}
}
