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
		Type:          "Slice",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newSlice[float32], New64: newSlice[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newSliceGPU[float32], newSliceGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Slice cuts its bottom along one axis (slice_param.axis, default 1, or the
// legacy slice_dim) into its tops: at the slice_point positions when given
// (one fewer than the tops), otherwise into equal parts. With a single top
// the top simply shares the bottom's data and diff.
type sliceLayer[T layer.Float] struct {
	layer.Base[T]
	points       []int
	axis         int
	outer, inner int   // counts before and after the axis
	shape        []int // a top's shape, kept to avoid allocating per pass
}

func newSlice[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &sliceLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	sp := p.GetSliceParam()
	if sp != nil && sp.Axis != nil && sp.SliceDim != nil {
		return nil, errors.New("either slice_param.axis or slice_dim should be specified, not both")
	}
	prev := 0
	for _, v := range sp.GetSlicePoint() {
		if int(v) <= prev {
			return nil, fmt.Errorf("slice_point must be positive and strictly increasing, got %v", sp.GetSlicePoint())
		}
		prev = int(v)
		l.points = append(l.points, prev)
	}
	return l, nil
}

// Type returns "Slice".
func (*sliceLayer[T]) Type() string { return "Slice" }

// Counts returns one bottom and one or more tops.
func (*sliceLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.AtLeast(1)}
}

// LayerSetUp has nothing to do: the axis depends on the bottom's shape.
func (*sliceLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the tops: the bottom's shape with the axis cut at the slice
// points, or into len(top) equal parts.
func (l *sliceLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	sp := l.Param().GetSliceParam()
	var dim *uint32
	if sp != nil {
		dim = sp.SliceDim
	}
	axis, err := legacyAxis(bottom[0], sp.GetAxis(), dim, "slice_dim")
	if err != nil {
		return err
	}
	l.axis = axis
	l.outer, l.inner = bottom[0].CountRange(0, axis), bottom[0].CountFrom(axis+1)
	l.shape = append(l.shape[:0], bottom[0].Shape()...)
	if err := l.checkSlices(bottom[0], len(top)); err != nil {
		return err
	}
	size := bottom[0].Shape()[axis]
	prev := 0
	for i, t := range top {
		switch {
		case len(l.points) == 0:
			l.shape[axis] = size / len(top)
		case i < len(l.points):
			l.shape[axis] = l.points[i] - prev
			prev = l.points[i]
		default:
			l.shape[axis] = size - prev
		}
		if err := t.Reshape(l.shape); err != nil {
			return err
		}
	}
	if len(top) == 1 {
		return shareDataAndDiff(top[0], bottom[0])
	}
	return nil
}

// checkSlices checks the slice points (or the equal split) against the
// bottom's axis.
func (l *sliceLayer[T]) checkSlices(b *blob.Blob[T], nTop int) error {
	size := b.Shape()[l.axis]
	if len(l.points) == 0 {
		if size%nTop != 0 {
			return fmt.Errorf("the number of tops (%d) should evenly divide the input's axis %d of size %d (input %s)",
				nTop, l.axis, size, b.ShapeString())
		}
		return nil
	}
	if len(l.points) != nTop-1 {
		return fmt.Errorf("%d slice points for %d tops: want one slice point fewer than tops", len(l.points), nTop)
	}
	if nTop > size {
		return fmt.Errorf("%d tops exceed the input's axis %d of size %d (input %s)", nTop, l.axis, size, b.ShapeString())
	}
	if last := l.points[len(l.points)-1]; last > size {
		return fmt.Errorf("slice_point %d is beyond the input's axis %d of size %d (input %s)", last, l.axis, size, b.ShapeString())
	}
	return nil
}

// ForwardCPU copies each top's range of the bottom.
func (l *sliceLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if len(top) == 1 {
		return nil
	}
	x := bottom[0].CPUData()
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: bottom[0].Shape()[l.axis]}
	for _, t := range top {
		p.partAxis = t.Shape()[l.axis]
		copyAxisPartCPU(p, t.MutableCPUData(), x, false)
		p.offset += p.partAxis
	}
	return nil
}

// BackwardCPU puts each top's diff back into its range of the bottom's.
func (l *sliceLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] || len(top) == 1 {
		return nil
	}
	dx := bottom[0].MutableCPUDiff()
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: bottom[0].Shape()[l.axis]}
	for _, t := range top {
		p.partAxis = t.Shape()[l.axis]
		copyAxisPartCPU(p, t.CPUDiff(), dx, true)
		p.offset += p.partAxis
	}
	return nil
}

// Axis returns the axis a set-up Slice cuts along (axis or the legacy
// slice_dim, made non-negative).
func (l *sliceLayer[T]) Axis() int { return l.axis }
