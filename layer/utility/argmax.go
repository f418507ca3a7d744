package utility

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "ArgMax",
		New32: newArgMax[float32], New64: newArgMax[float64],
		ONNX: layer.ONNXConverted,
	})
}

// ArgMax outputs the indices of the top_k largest values (Caffe's
// ArgMaxLayer): along argmax_param.axis if set (that axis of the top has
// top_k entries; with out_max_val they are the values instead), else over
// each item's flattened values, giving a top of shape (N, 1, top_k), or
// (N, 2, top_k) holding indices then values with out_max_val. Ties go to
// the larger index, as Caffe's sort of (value, index) pairs. It has no
// backward pass.
type argMaxLayer[T layer.Float] struct {
	layer.Base[T]
	topK    int
	maxVal  bool
	hasAxis bool
	axis    int
	pairs   []argPair[T]
	shape   []int
}

type argPair[T layer.Float] struct {
	v T
	i int
}

func newArgMax[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &argMaxLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ap := p.GetArgmaxParam()
	l.topK, l.maxVal, l.hasAxis = int(ap.GetTopK()), ap.GetOutMaxVal(), ap != nil && ap.Axis != nil
	if l.topK < 1 {
		return nil, errors.New("argmax_param.top_k must not be less than 1")
	}
	return l, nil
}

// Type returns "ArgMax".
func (*argMaxLayer[T]) Type() string { return "ArgMax" }

// Counts returns one bottom and one top.
func (*argMaxLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp checks the axis and top_k against the bottom.
func (l *argMaxLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if l.hasAxis {
		axis, err := bottom[0].CanonicalAxisIndex(int(l.Param().GetArgmaxParam().GetAxis()))
		if err != nil {
			return err
		}
		l.axis = axis
		if l.topK > bottom[0].Shape()[axis] {
			return fmt.Errorf("top_k (%d) must be less than or equal to the dimension of the axis (%d of %s)", l.topK, axis, bottom[0].ShapeString())
		}
	} else if l.topK > bottom[0].CountFrom(1) {
		return fmt.Errorf("top_k (%d) must be less than or equal to the dimension of the flattened bottom blob per instance (%d)", l.topK, bottom[0].CountFrom(1))
	}
	return nil
}

// Reshape sizes the top.
func (l *argMaxLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if l.hasAxis {
		l.shape = append(l.shape[:0], bottom[0].Shape()...)
		l.shape[l.axis] = l.topK
	} else {
		l.shape = append(l.shape[:0], 1, 1, 1)
		for len(l.shape) < bottom[0].NumAxes() {
			l.shape = append(l.shape, 1)
		}
		l.shape[0], l.shape[2] = bottom[0].Shape()[0], l.topK
		if l.maxVal {
			l.shape[1] = 2
		}
	}
	return top[0].Reshape(l.shape)
}

// ForwardCPU finds the top_k of each slice.
func (l *argMaxLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	dim, stride := bottom[0].CountFrom(1), 1
	if l.hasAxis {
		dim = bottom[0].Shape()[l.axis]
		stride = bottom[0].CountFrom(l.axis) / dim
	}
	k := l.topK
	l.pairs = slices.Grow(l.pairs[:0], dim)[:dim]
	for i := range bottom[0].Count() / dim {
		outer, inner := i/stride, i%stride
		for j := range dim {
			l.pairs[j] = argPair[T]{x[(outer*dim+j)*stride+inner], j}
		}
		slices.SortFunc(l.pairs, func(a, b argPair[T]) int {
			switch {
			case a.v > b.v || a.v == b.v && a.i > b.i:
				return -1
			case a.v == b.v && a.i == b.i:
				return 0
			}
			return 1
		})
		for j := range k {
			switch {
			case l.hasAxis && l.maxVal:
				y[(outer*k+j)*stride+inner] = l.pairs[j].v
			case l.hasAxis:
				y[(outer*k+j)*stride+inner] = T(l.pairs[j].i)
			case l.maxVal:
				y[2*i*k+j] = T(l.pairs[j].i)
				y[2*i*k+k+j] = l.pairs[j].v
			default:
				y[i*k+j] = T(l.pairs[j].i)
			}
		}
	}
	return nil
}

// BackwardCPU is not defined for ArgMax.
func (*argMaxLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if slices.Contains(propagateDown, true) {
		return errors.New("ArgMax has no backward pass")
	}
	return nil
}
