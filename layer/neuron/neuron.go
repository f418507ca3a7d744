package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// neuron is the base of the element-wise layers (Caffe's NeuronLayer): one
// bottom, one top of the same shape, which may be the bottom itself (in
// place).
type neuron[T layer.Float] struct{ layer.Base[T] }

// Counts returns one bottom and one top.
func (*neuron[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do for most element-wise layers.
func (*neuron[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape gives the top the bottom's shape.
func (*neuron[T]) Reshape(bottom, top []*blob.Blob[T]) error { return top[0].ReshapeLike(bottom[0]) }

// elementwise spreads an element-wise layer's passes over the cores: the
// layer gives its pass over matching ranges of its arrays, forward (x to
// y) and backward (the input it needs, x or y, and dy to dx). The closures
// that cut the ranges are made once (init), so a pass allocates nothing.
type elementwise[T layer.Float] struct {
	in, out, dy               []T
	forwardRange              func(x, y []T)
	backwardRange             func(in, dy, dx []T)
	forwardPart, backwardPart func(part, lo, hi int)
}

func (e *elementwise[T]) init(forward func(x, y []T), backward func(in, dy, dx []T)) {
	e.forwardRange, e.backwardRange = forward, backward
	e.forwardPart = func(_, lo, hi int) { e.forwardRange(e.in[lo:hi], e.out[lo:hi]) }
	e.backwardPart = func(_, lo, hi int) { e.backwardRange(e.in[lo:hi], e.dy[lo:hi], e.out[lo:hi]) }
}

// forward computes y from x (y at least as long as x; they may be one).
func (e *elementwise[T]) forward(x, y []T) {
	e.in, e.out = x, y[:len(x)]
	kit.ElementParallel(len(x), e.forwardPart)
	e.in, e.out = nil, nil
}

// backward computes dx from in (x or y) and dy.
func (e *elementwise[T]) backward(in, dy, dx []T) {
	e.in, e.dy, e.out = in, dy[:len(in)], dx[:len(in)]
	kit.ElementParallel(len(in), e.backwardPart)
	e.in, e.dy, e.out = nil, nil, nil
}
