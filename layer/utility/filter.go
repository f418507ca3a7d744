package utility

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Filter",
		New32: newFilter[float32], New64: newFilter[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newFilterGPU[float32], newFilterGPU[float64])},
		ONNXWhy: "its output size depends on the data",
	})
}

// Filter keeps the items of its bottoms whose selector is not zero
// (Caffe's FilterLayer): the last bottom is the selector (N x 1 x ...), the
// others have N items each and give one top each, holding the selected
// items in order. At setup, before any selector is known, the tops have N
// items. Items not selected get a zero gradient; the selector gets none.
type filterLayer[T layer.Float] struct {
	layer.Base[T]
	keep         []int
	firstReshape bool
	shape        []int
}

func newFilter[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &filterLayer[T]{firstReshape: true}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Filter".
func (*filterLayer[T]) Type() string { return "Filter" }

// Counts returns two or more bottoms and one or more tops, one fewer than
// the bottoms.
func (*filterLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(2), Top: layer.AtLeast(1)}
}

// AllowForceBackward refuses the selector.
func (l *filterLayer[T]) AllowForceBackward(i int) bool { return i != len(l.Param().GetBottom())-1 }

// LayerSetUp checks that there is one top per filtered bottom.
func (l *filterLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if len(top) != len(bottom)-1 {
		return fmt.Errorf("takes one top per bottom except the selector: %d bottoms, %d tops", len(bottom), len(top))
	}
	l.firstReshape = true
	return nil
}

// Reshape reads the selector and sizes the tops.
func (l *filterLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	sel := bottom[len(bottom)-1]
	if sel.NumAxes() == 0 {
		return errors.New("the selector needs a first (batch) axis")
	}
	for i := 1; i < sel.NumAxes(); i++ {
		if sel.Shape()[i] != 1 {
			return fmt.Errorf("selector blob dimensions must be singletons (1), except the first: %s", sel.ShapeString())
		}
	}
	for i, b := range bottom[:len(bottom)-1] {
		if b.NumAxes() == 0 || b.Shape()[0] != sel.Shape()[0] {
			return fmt.Errorf("bottom %d (%s) should have the same 0th dimension as the selector blob (%s)", i, b.ShapeString(), sel.ShapeString())
		}
	}
	l.keep = l.keep[:0]
	for i, v := range sel.CPUData() {
		if v != 0 {
			l.keep = append(l.keep, i)
		}
	}
	n := len(l.keep)
	if l.firstReshape {
		n, l.firstReshape = bottom[0].Shape()[0], false
	}
	for t := range top {
		l.shape = append(append(l.shape[:0], n), bottom[t].Shape()[1:]...)
		if err := top[t].Reshape(l.shape); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU copies the selected items on the host.
func (l *filterLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return filterForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU routes the gradients on the host.
func (l *filterLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return filterBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

func filterForward[T layer.Float, A any](l *filterLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	for t := range top {
		dim := bottom[t].CountFrom(1)
		x, y := d.Data(bottom[t]), d.MutableData(top[t])
		for n, item := range l.keep {
			d.Copy(dim, d.Offset(x, item*dim), d.Offset(y, n*dim))
		}
	}
	return d.Err()
}

// filterBackward routes each top item's gradient to its bottom item and
// zeroes the others.
func filterBackward[T layer.Float, A any](l *filterLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[len(bottom)-1] {
		return errors.New("Filter cannot backpropagate to filter index inputs")
	}
	for t := range top {
		if !propagateDown[t] {
			continue
		}
		dim := bottom[t].CountFrom(1)
		dy, dx := d.Diff(top[t]), d.MutableDiff(bottom[t])
		d.Set(bottom[t].Count(), 0, dx)
		for n, item := range l.keep {
			d.Copy(dim, d.Offset(dy, n*dim), d.Offset(dx, item*dim))
		}
	}
	return d.Err()
}
