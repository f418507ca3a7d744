package utility

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Permute",
		New32: newPermute[float32], New64: newPermute[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newPermuteGPU[float32], newPermuteGPU[float64])},
		ONNX:     layer.ONNXConverted,
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// Permute is SSD's layer (weiliu89/caffe): it reorders the bottom's axes,
// top axis i being bottom axis permute_param.order[i]. Axes the order does
// not name follow in their own order, so order 0 2 3 1 turns N x C x H x W
// into N x H x W x C, as SSD does with its box predictions before
// flattening them.
type permuteLayer[T layer.Float] struct {
	layer.Base[T]
	order []int // a full permutation of the bottom's axes
	// oldSteps[i] is the bottom stride of top axis i; newSteps the top's own
	// strides.
	oldSteps, newSteps []int
	shape              []int
	idx                []int // permute's odometer, made by Reshape
}

func newPermute[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &permuteLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Permute".
func (*permuteLayer[T]) Type() string { return "Permute" }

// Counts: one bottom, one top.
func (*permuteLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp reads and completes the order.
func (l *permuteLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	axes := bottom[0].NumAxes()
	seen := make([]bool, axes)
	l.order = l.order[:0]
	for _, o := range l.Param().GetPermuteParam().GetOrder() {
		if int(o) >= axes {
			return fmt.Errorf("order %d is not an axis of the %d-axis bottom %s", o, axes, bottom[0].ShapeString())
		}
		if seen[o] {
			return fmt.Errorf("order lists axis %d twice", o)
		}
		seen[o] = true
		l.order = append(l.order, int(o))
	}
	for a := range axes {
		if !seen[a] {
			l.order = append(l.order, a)
		}
	}
	return nil
}

// Reshape computes the top's shape and the strides.
func (l *permuteLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	in := bottom[0].Shape()
	if len(in) != len(l.order) {
		return fmt.Errorf("bottom %s has %d axes, the order was set up for %d", bottom[0].ShapeString(), len(in), len(l.order))
	}
	n := len(in)
	l.shape, l.oldSteps, l.newSteps, l.idx = make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	inSteps := make([]int, n)
	step := 1
	for a := n - 1; a >= 0; a-- {
		inSteps[a] = step
		step *= in[a]
	}
	for i, a := range l.order {
		l.shape[i], l.oldSteps[i] = in[a], inSteps[a]
	}
	step = 1
	for i := n - 1; i >= 0; i-- {
		l.newSteps[i] = step
		step *= l.shape[i]
	}
	return top[0].Reshape(l.shape)
}

// permute copies between the bottom's layout and the top's: forward
// top[i] = bottom[src(i)], backward bottom[src(i)] = top[i]. It walks the
// top a row (its last axis) at a time, the row's bottom offset kept by an
// odometer over the other axes: the index computed per element, with a
// division per axis, made SSD's permutes of its heads' outputs (order 0 2
// 3 1) take as long as a small convolution.
func (l *permuteLayer[T]) permute(bottom, top []T, backward bool) {
	n := len(l.shape)
	if n == 0 || len(top) == 0 {
		if backward {
			copy(bottom, top)
		} else {
			copy(top, bottom)
		}
		return
	}
	width, step := l.shape[n-1], l.oldSteps[n-1]
	idx := l.idx[:n-1]
	clear(idx)
	src := 0
	for i := 0; i < len(top); i += width {
		row := top[i : i+width]
		if backward {
			for j, v := range row {
				bottom[src+j*step] = v
			}
		} else {
			for j := range row {
				row[j] = bottom[src+j*step]
			}
		}
		src = l.nextRow(idx, src)
	}
}

// nextRow advances the odometer idx over the top's axes but the last by
// one row and returns the bottom offset of that row, src being the
// current one's.
func (l *permuteLayer[T]) nextRow(idx []int, src int) int {
	for a := len(idx) - 1; a >= 0; a-- {
		idx[a]++
		src += l.oldSteps[a]
		if idx[a] < l.shape[a] {
			return src
		}
		src -= idx[a] * l.oldSteps[a]
		idx[a] = 0
	}
	return src
}

// ForwardCPU reorders the data.
func (l *permuteLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.permute(bottom[0].CPUData(), top[0].MutableCPUData(), false)
	return nil
}

// BackwardCPU reorders the gradient back.
func (l *permuteLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[0] {
		l.permute(bottom[0].MutableCPUDiff(), top[0].CPUDiff(), true)
	}
	return nil
}
