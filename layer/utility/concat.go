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
		Type:          "Concat",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newConcat[float32], New64: newConcat[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newConcatGPU[float32], newConcatGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Concat joins its bottoms along one axis (concat_param.axis, default 1, or
// the legacy concat_dim). All other dimensions must agree. With a single
// bottom the top simply shares the bottom's data and diff.
type concatLayer[T layer.Float] struct {
	layer.Base[T]
	axis         int
	outer, inner int   // counts before and after the axis
	shape        []int // the top's shape, kept to avoid allocating per pass
}

func newConcat[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &concatLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	cp := p.GetConcatParam()
	if cp != nil && cp.Axis != nil && cp.ConcatDim != nil {
		return nil, errors.New("either concat_param.axis or concat_dim should be specified, not both")
	}
	return l, nil
}

// Type returns "Concat".
func (*concatLayer[T]) Type() string { return "Concat" }

// Counts returns one or more bottoms and one top.
func (*concatLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do: the axis depends on the bottoms' shapes.
func (*concatLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// legacyAxis resolves an axis given either as a signed axis (negative
// counts from the end) or as a legacy unsigned *_dim field, which takes
// precedence when set and may not be negative.
func legacyAxis[T layer.Float](b *blob.Blob[T], axis int32, legacy *uint32, legacyName string) (int, error) {
	if legacy == nil {
		return b.CanonicalAxisIndex(int(axis))
	}
	if int(*legacy) >= b.NumAxes() {
		return 0, fmt.Errorf("%s %d out of range for the %d-D input %s", legacyName, *legacy, b.NumAxes(), b.ShapeString())
	}
	return int(*legacy), nil
}

// Reshape checks that the bottoms agree off the concat axis and sizes the
// top: the bottoms' common shape with their concat-axis sizes summed.
func (l *concatLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	cp := l.Param().GetConcatParam()
	var dim *uint32
	if cp != nil {
		dim = cp.ConcatDim
	}
	axis, err := legacyAxis(bottom[0], cp.GetAxis(), dim, "concat_dim")
	if err != nil {
		return err
	}
	l.axis = axis
	l.shape = append(l.shape[:0], bottom[0].Shape()...)
	for i, b := range bottom[1:] {
		if err := concatCompatible(bottom[0], b, i+1, axis); err != nil {
			return err
		}
		l.shape[axis] += b.Shape()[axis]
	}
	if err := top[0].Reshape(l.shape); err != nil {
		return err
	}
	l.outer, l.inner = bottom[0].CountRange(0, axis), bottom[0].CountFrom(axis+1)
	if len(bottom) == 1 {
		return shareDataAndDiff(top[0], bottom[0])
	}
	return nil
}

// concatCompatible checks that bottom i has bottom 0's shape except along
// the axis.
func concatCompatible[T layer.Float](first, b *blob.Blob[T], i, axis int) error {
	if b.NumAxes() != first.NumAxes() {
		return fmt.Errorf("all inputs must have the same number of axes: bottom 0 has shape %s, bottom %d has shape %s",
			first.ShapeString(), i, b.ShapeString())
	}
	for j, d := range first.Shape() {
		if j != axis && b.Shape()[j] != d {
			return fmt.Errorf("all inputs must have the same shape except along the concat axis %d: bottom 0 has shape %s, bottom %d has shape %s",
				axis, first.ShapeString(), i, b.ShapeString())
		}
	}
	return nil
}

// shareDataAndDiff makes top an alias of bottom (data and diff).
func shareDataAndDiff[T layer.Float](top, bottom *blob.Blob[T]) error {
	if err := top.ShareData(bottom); err != nil {
		return err
	}
	return top.ShareDiff(bottom)
}

// axisPart places a part blob inside a whole one along an axis: the whole
// is outer blocks of wholeAxis*inner elements, and the part's partAxis*inner
// elements of each block start offset*inner elements into it. Concat's
// bottoms and Slice's tops are parts of the other side's blob.
type axisPart struct {
	outer, inner, partAxis, wholeAxis, offset int
}

// copyAxisPartCPU copies the part from part into its place in whole
// (toWhole) or from its place in whole into part, block by block.
func copyAxisPartCPU[T layer.Float](p axisPart, part, whole []T, toWhole bool) {
	n := p.partAxis * p.inner
	for o := range p.outer {
		partBlock := part[o*n : (o+1)*n]
		start := (o*p.wholeAxis + p.offset) * p.inner
		wholeBlock := whole[start : start+n]
		if toWhole {
			copy(wholeBlock, partBlock)
		} else {
			copy(partBlock, wholeBlock)
		}
	}
}

// ForwardCPU copies each bottom into its range of the top.
func (l *concatLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if len(bottom) == 1 {
		return nil
	}
	out := top[0].MutableCPUData()
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for _, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		copyAxisPartCPU(p, b.CPUData(), out, true)
		p.offset += p.partAxis
	}
	return nil
}

// BackwardCPU hands each bottom its range of the top's diff.
func (l *concatLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if len(bottom) == 1 {
		return nil
	}
	dy := top[0].CPUDiff()
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for i, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		if propagateDown[i] {
			copyAxisPartCPU(p, b.MutableCPUDiff(), dy, false)
		}
		p.offset += p.partAxis
	}
	return nil
}

// Axis returns the axis a set-up Concat joins along (axis or the legacy
// concat_dim, made non-negative).
func (l *concatLayer[T]) Axis() int { return l.axis }
