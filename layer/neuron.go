package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
)

// neuron is the base of the element-wise layers (Caffe's NeuronLayer): one
// bottom, one top of the same shape, which may be the bottom itself (in
// place).
type neuron[T Float] struct{ Base[T] }

// Counts returns one bottom and one top.
func (*neuron[T]) Counts() BlobCounts { return BlobCounts{Bottom: Exactly(1), Top: Exactly(1)} }

// LayerSetUp has nothing to do for most element-wise layers.
func (*neuron[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape gives the top the bottom's shape.
func (*neuron[T]) Reshape(bottom, top []*blob.Blob[T]) error { return top[0].ReshapeLike(bottom[0]) }

// elementParallelMin is the fewest elements an element-wise pass spreads
// over the cores: below it (about 64 KB of float32, which one core runs
// in some microseconds) handing parts to other goroutines costs more than
// it saves.
const elementParallelMin = 1 << 14

// elementParallel runs body over [0, n) in contiguous parts on all cores
// when n is large enough (mathfn.Parallel), else on the calling goroutine.
// Element-wise passes are memory-bound loops that a second core speeds up
// (CaffeNet's relu1 over 2.9 million values: 2.3 ms on one core, 1.4 on
// two), or bound by a function per value (tanh) that each core computes
// on its own part.
func elementParallel(n int, body func(part, lo, hi int)) { unitsParallel(n, 1, body) }

// unitsParallel is elementParallel over units of size elements each (the
// rows or blocks of a pass), spread when they hold enough elements.
func unitsParallel(units, size int, body func(part, lo, hi int)) {
	if units*size < elementParallelMin {
		body(0, 0, units)
		return
	}
	mathfn.Parallel(units, body)
}

// elementwise spreads an element-wise layer's passes over the cores: the
// layer gives its pass over matching ranges of its arrays, forward (x to
// y) and backward (the input it needs, x or y, and dy to dx). The closures
// that cut the ranges are made once (init), so a pass allocates nothing.
type elementwise[T Float] struct {
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
	elementParallel(len(x), e.forwardPart)
	e.in, e.out = nil, nil
}

// backward computes dx from in (x or y) and dy.
func (e *elementwise[T]) backward(in, dy, dx []T) {
	e.in, e.dy, e.out = in, dy[:len(in)], dx[:len(in)]
	elementParallel(len(in), e.backwardPart)
	e.in, e.dy, e.out = nil, nil, nil
}
