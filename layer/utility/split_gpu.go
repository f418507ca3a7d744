package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// splitGPU is Split's GPU half. In a 16-bit type (layer.ReducedEngine)
// it sums the tops' 16-bit diffs: the plan stores a Split's bottom and
// tops alike, since they share the data (net's sharing groups), so
// ResNet's residual inputs stay in 16 bits across their Splits.
type splitGPU[T layer.Float] struct {
	l   *splitLayer[T]
	red kit.Reduced[T]
}

func newSplitGPU[T layer.Float](l *splitLayer[T]) layer.Engine[T] { return &splitGPU[T]{l: l} }

// Forward has nothing to do: the tops share the bottom's data.
func (*splitGPU[T]) Forward(bottom, top []*blob.Blob[T]) error { return nil }

// Backward sums the tops' diffs into the bottom's on the device.
func (e *splitGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if e.red.On() && bottom[0].Storage() == e.red.Storage() {
		return e.backwardReduced(top, propagateDown, bottom)
	}
	return splitBackward[T](l.GPU(), top, propagateDown, bottom)
}

// SetReduced makes the engine sum 16-bit diffs where its blobs are stored
// in s (where they are not, the FP32 pass runs: the blobs' storage is
// the group's, all alike).
func (e *splitGPU[T]) SetReduced(s syncedmem.Storage) error {
	return e.red.SetReduced(e.l.Context(), s)
}

func (e *splitGPU[T]) backwardReduced(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := e.l.GPU()
	n := bottom[0].Count()
	dx := g.MutableDiff(bottom[0])
	if err := g.Err(); err != nil {
		return err
	}
	if len(top) == 1 {
		return e.red.Copy(n, g.Diff(top[0]), dx)
	}
	if err := e.red.Sum2(n, 1, g.Diff(top[0]), 1, g.Diff(top[1]), dx); err != nil {
		return err
	}
	for _, t := range top[2:] {
		if err := e.red.Axpy(n, 1, g.Diff(t), dx); err != nil {
			return err
		}
	}
	return g.Err()
}

// AcceptsChannelsLast: a Split's tops share its bottom's data and their
// diffs add value by value, in whatever order the plan gave the group
// (layer.ChannelsLastEngine; the plan orders a Split's blobs alike).
func (e *splitGPU[T]) AcceptsChannelsLast() bool { return e.red.On() }

// SetChannelsLast records the order; the sums need nothing else.
func (e *splitGPU[T]) SetChannelsLast(on bool) error { return e.red.SetChannelsLast(on) }
