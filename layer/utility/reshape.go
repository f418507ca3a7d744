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
		Type:          "Reshape",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newReshape[float32], New64: newReshape[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newReshapeGPU[float32], newReshapeGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Reshape gives its bottom a new shape without touching the data: the top
// shares the bottom's data and diff. reshape_param.shape replaces the
// bottom's axes [axis, axis+num_axes) (default: all of them); in it a 0
// copies the bottom's dimension at that position and one -1 is inferred
// from the count.
type reshapeLayer[T layer.Float] struct {
	layer.Base[T]
	dims          []int // reshape_param.shape
	copyAxes      []int // positions in dims holding 0
	inferredAxis  int   // position in dims holding -1, or -1
	constantCount int   // product of the explicit dims
	shape         []int // the top's shape, kept to avoid allocating per pass
}

func newReshape[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &reshapeLayer[T]{inferredAxis: -1, constantCount: 1}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	rp := p.GetReshapeParam()
	if rp.GetNumAxes() < -1 {
		return nil, fmt.Errorf("reshape_param.num_axes must be >= 0, or -1 for all, got %d", rp.GetNumAxes())
	}
	for i, d := range rp.GetShape().GetDim() {
		l.dims = append(l.dims, int(d))
		switch {
		case d == 0:
			l.copyAxes = append(l.copyAxes, i)
		case d == -1:
			if l.inferredAxis >= 0 {
				return nil, errors.New("new shape contains multiple -1 dims; at most a single (1) value of -1 may be specified")
			}
			l.inferredAxis = i
		case d < -1:
			return nil, fmt.Errorf("new shape %v has dimension %d at position %d: dims must be positive, 0 (copy) or -1 (infer)", rp.GetShape().GetDim(), d, i)
		default:
			l.constantCount *= int(d)
		}
	}
	return l, nil
}

// Type returns "Reshape".
func (*reshapeLayer[T]) Type() string { return "Reshape" }

// Counts returns one bottom and one top.
func (*reshapeLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do: the constructor parsed the new shape.
func (*reshapeLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// replaced returns the range [start, end) of the bottom's axes that the new
// shape replaces.
func (l *reshapeLayer[T]) replaced(b *blob.Blob[T]) (start, end int, err error) {
	rp := l.Param().GetReshapeParam()
	axis, n := int(rp.GetAxis()), b.NumAxes()
	start = axis
	if axis < 0 {
		start = n + axis + 1
	}
	if start < 0 || start > n {
		return 0, 0, fmt.Errorf("reshape_param.axis %d out of range for the %d-D input %s", axis, n, b.ShapeString())
	}
	end = n
	if na := int(rp.GetNumAxes()); na != -1 {
		end = start + na
	}
	if end > n {
		return 0, 0, fmt.Errorf("end axis = axis + num_axes = %d is out of range for the %d-D input %s", end, n, b.ShapeString())
	}
	return start, end, nil
}

// Reshape computes the top's shape and makes the top a view of the bottom.
func (l *reshapeLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	start, end, err := l.replaced(b)
	if err != nil {
		return err
	}
	l.shape = append(l.shape[:0], b.Shape()[:start]...)
	l.shape = append(l.shape, l.dims...)
	l.shape = append(l.shape, b.Shape()[end:]...)
	for _, i := range l.copyAxes {
		if start+i >= b.NumAxes() {
			return fmt.Errorf("new shape contains a 0 at position %d, but there is no corresponding axis %d of the input %s to copy",
				i, start+i, b.ShapeString())
		}
		l.shape[start+i] = b.Shape()[start+i]
	}
	if l.inferredAxis >= 0 {
		explicit := l.constantCount * b.CountRange(0, start) * b.CountFrom(end)
		for _, i := range l.copyAxes {
			explicit *= l.shape[start+i]
		}
		if explicit == 0 || b.Count()%explicit != 0 {
			return fmt.Errorf("bottom count (%d) must be divisible by the product of the specified dimensions (%d); input %s",
				b.Count(), explicit, b.ShapeString())
		}
		l.shape[start+l.inferredAxis] = b.Count() / explicit
	}
	if err := top[0].Reshape(l.shape); err != nil {
		return err
	}
	if top[0].Count() != b.Count() {
		return fmt.Errorf("output count must match input count: new shape %s has %d elements, the input %s has %d",
			top[0].ShapeString(), top[0].Count(), b.ShapeString(), b.Count())
	}
	return shareDataAndDiff(top[0], b)
}

// ForwardCPU has nothing to do: the top shares the bottom's data.
func (*reshapeLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }

// BackwardCPU has nothing to do: the top shares the bottom's diff.
func (*reshapeLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
