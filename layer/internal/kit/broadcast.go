package kit

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

// RowMin is the shortest row of a broadcast worth a call of mathfn's
// vector operations: shorter rows (one value each, after an InnerProduct)
// are cheaper in the caller's own loop.
const RowMin = 16

// Broadcasting shared by Bias and Scale: a vector v of dim elements applies
// to a bottom viewed as outer x dim x inner, element (o, d, i) pairing with
// v[d]. Both layers (and Scale's bias term) use these functions, written
// once for both devices.

// BroadcastOp is how an element combines with the vector element it pairs
// with.
type BroadcastOp int

const (
	BroadcastAdd BroadcastOp = iota // y = x + v
	BroadcastMul                    // y = x * v
)

// Broadcaster is a device view that can also apply a broadcastOp: for i in
// [0, n), y[i] = x[i] op v[(i / inner) % dim]. x may be y.
type Broadcaster[T Float, A any] interface {
	device.View[T, A]
	Broadcast(op BroadcastOp, n, dim, inner int, x, v, y A) error
}

// HostBroadcaster is the CPU's broadcaster.
type HostBroadcaster[T Float] struct{ device.HostView[T] }

// Broadcast applies op on the host (see Broadcaster).
func (HostBroadcaster[T]) Broadcast(op BroadcastOp, n, dim, inner int, x, v, y []T) error {
	x, y = x[:n], y[:n]
	for start := 0; start < n; start += inner {
		f := v[(start/inner)%dim]
		xs, ys := x[start:start+inner], y[start:start+inner]
		switch {
		case inner < RowMin && op == BroadcastAdd: // rows of one (after an InnerProduct)
			for i, e := range xs {
				ys[i] = e + f
			}
		case inner < RowMin:
			for i, e := range xs {
				ys[i] = e * f
			}
		case op == BroadcastAdd:
			mathfn.MulAddScalar(len(xs), 1, f, xs, ys) // x*1 is x: y = x + f
		default:
			mathfn.MulScalar(len(xs), f, xs, ys)
		}
	}
	return nil
}

// BroadcastShape is the geometry of a broadcast: outer x dim x inner.
type BroadcastShape struct{ Outer, Dim, Inner int }

func (s BroadcastShape) Count() int { return s.Outer * s.Dim * s.Inner }

// BroadcastGeometry resolves where vector v (a Bias or Scale blob or
// bottom) applies to x: from axis (0 when v is a scalar, since every axis
// is then equivalent) over v's axes, whose dimensions must be x's.
func BroadcastGeometry[T Float](what string, x, v *blob.Blob[T], axisParam int) (BroadcastShape, error) {
	if v.NumAxes() == 0 && v.Count() != 1 {
		return BroadcastShape{}, fmt.Errorf("%s blob has no shape (an empty blob, never reshaped); a scalar has shape () and 1 element", what)
	}
	axis := 0
	if v.NumAxes() > 0 {
		var err error
		if axis, err = x.CanonicalAxisIndex(axisParam); err != nil {
			return BroadcastShape{}, err
		}
	}
	if x.NumAxes() < axis+v.NumAxes() {
		return BroadcastShape{}, fmt.Errorf("%s blob's shape %s extends past bottom[0]'s shape %s when applied starting with bottom[0] axis = %d",
			what, v.ShapeString(), x.ShapeString(), axis)
	}
	for i, d := range v.Shape() {
		if x.Shape()[axis+i] != d {
			return BroadcastShape{}, fmt.Errorf("dimension mismatch between bottom[0]->shape(%d) = %d and %s->shape(%d) = %d (bottom[0] %s, %s %s)",
				axis+i, x.Shape()[axis+i], what, i, d, x.ShapeString(), what, v.ShapeString())
		}
	}
	return BroadcastShape{
		Outer: x.CountRange(0, axis),
		Dim:   v.Count(),
		Inner: x.CountFrom(axis + v.NumAxes()),
	}, nil
}

// LearnedVectorShape is the shape of a learnable Bias or Scale blob for
// bottom x: x's dimensions from axis over numAxes axes (-1: to the end).
func LearnedVectorShape[T Float](what string, x *blob.Blob[T], axisParam, numAxes int) ([]int, error) {
	axis, err := x.CanonicalAxisIndex(axisParam)
	if err != nil {
		return nil, err
	}
	if numAxes < -1 {
		return nil, fmt.Errorf("num_axes must be non-negative, or -1 to extend to the end of bottom[0]; got %d", numAxes)
	}
	end := x.NumAxes()
	if numAxes >= 0 {
		if x.NumAxes() < axis+numAxes {
			return nil, fmt.Errorf("%s blob's shape extends past bottom[0]'s shape %s when applied starting with bottom[0] axis = %d over num_axes = %d",
				what, x.ShapeString(), axis, numAxes)
		}
		end = axis + numAxes
	}
	return append([]int{}, x.Shape()[axis:end]...), nil
}

// BroadcastBuffers are the scratch blobs of sumBroadcast: a ones vector
// and the per-(outer, d) partial sums.
type BroadcastBuffers[T Float] struct {
	ones, sums *blob.Blob[T]
}

// OnesCPU returns the ones on the host: max(Outer, Inner, 1) of them for
// the shape of the last Reshape.
func (bb *BroadcastBuffers[T]) OnesCPU() []T { return bb.ones.CPUData() }

// Reshape sizes the buffers for s (on b's device).
func (bb *BroadcastBuffers[T]) Reshape(b BlobMaker[T], s BroadcastShape) error {
	if err := Ones(b, &bb.ones, max(s.Outer, s.Inner, 1)); err != nil {
		return err
	}
	if bb.sums == nil {
		nb, err := b.NewBlob()
		if err != nil {
			return err
		}
		bb.sums = nb
	}
	return bb.sums.Reshape([]int{s.Outer * s.Dim})
}

// SumBroadcast is the adjoint of a broadcast: dst = beta*dst + the sum of
// src (outer x dim x inner) over outer and inner, as gemvs against a ones
// vector (beta 1 accumulates into a parameter's diff, 0 assigns: dst's old
// contents are then never read, so stale NaNs cannot leak in).
func SumBroadcast[T Float, A any](d device.View[T, A], s BroadcastShape, bb *BroadcastBuffers[T], src A, beta T, dst A) {
	ones := d.Data(bb.ones)
	switch {
	case s.Outer == 1 && s.Inner == 1 && beta == 0:
		d.Copy(s.Dim, src, dst)
	case s.Outer == 1 && s.Inner == 1:
		d.Axpby(s.Dim, 1, src, beta, dst)
	case s.Outer == 1:
		d.Gemv(blas.NoTrans, s.Dim, s.Inner, 1, src, ones, beta, dst)
	case s.Inner == 1:
		d.Gemv(blas.Trans, s.Outer, s.Dim, 1, src, ones, beta, dst)
	default:
		sums := d.MutableData(bb.sums)
		d.Gemv(blas.NoTrans, s.Outer*s.Dim, s.Inner, 1, src, ones, 0, sums)
		d.Gemv(blas.Trans, s.Outer, s.Dim, 1, sums, ones, beta, dst)
	}
}
