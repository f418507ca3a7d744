package layer

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

// rowMin is the shortest row of a broadcast worth a call of mathfn's
// vector operations: shorter rows (one value each, after an InnerProduct)
// are cheaper in the caller's own loop.
const rowMin = 16

// Broadcasting shared by Bias and Scale: a vector v of dim elements applies
// to a bottom viewed as outer x dim x inner, element (o, d, i) pairing with
// v[d]. Both layers (and Scale's bias term) use these functions, written
// once for both devices.

// broadcastOp is how an element combines with the vector element it pairs
// with.
type broadcastOp int

const (
	broadcastAdd broadcastOp = iota // y = x + v
	broadcastMul                    // y = x * v
)

// broadcaster is a device view that can also apply a broadcastOp: for i in
// [0, n), y[i] = x[i] op v[(i / inner) % dim]. x may be y.
type broadcaster[T Float, A any] interface {
	device.View[T, A]
	broadcast(op broadcastOp, n, dim, inner int, x, v, y A) error
}

// hostBroadcaster is the CPU's broadcaster.
type hostBroadcaster[T Float] struct{ device.HostView[T] }

func (hostBroadcaster[T]) broadcast(op broadcastOp, n, dim, inner int, x, v, y []T) error {
	x, y = x[:n], y[:n]
	for start := 0; start < n; start += inner {
		f := v[(start/inner)%dim]
		xs, ys := x[start:start+inner], y[start:start+inner]
		switch {
		case inner < rowMin && op == broadcastAdd: // rows of one (after an InnerProduct)
			for i, e := range xs {
				ys[i] = e + f
			}
		case inner < rowMin:
			for i, e := range xs {
				ys[i] = e * f
			}
		case op == broadcastAdd:
			mathfn.MulAddScalar(len(xs), 1, f, xs, ys) // x*1 is x: y = x + f
		default:
			mathfn.MulScalar(len(xs), f, xs, ys)
		}
	}
	return nil
}

// broadcastShape is the geometry of a broadcast: outer x dim x inner.
type broadcastShape struct{ outer, dim, inner int }

func (s broadcastShape) count() int { return s.outer * s.dim * s.inner }

// broadcastGeometry resolves where vector v (a Bias or Scale blob or
// bottom) applies to x: from axis (0 when v is a scalar, since every axis
// is then equivalent) over v's axes, whose dimensions must be x's.
func broadcastGeometry[T Float](what string, x, v *blob.Blob[T], axisParam int) (broadcastShape, error) {
	if v.NumAxes() == 0 && v.Count() != 1 {
		return broadcastShape{}, fmt.Errorf("%s blob has no shape (an empty blob, never reshaped); a scalar has shape () and 1 element", what)
	}
	axis := 0
	if v.NumAxes() > 0 {
		var err error
		if axis, err = x.CanonicalAxisIndex(axisParam); err != nil {
			return broadcastShape{}, err
		}
	}
	if x.NumAxes() < axis+v.NumAxes() {
		return broadcastShape{}, fmt.Errorf("%s blob's shape %s extends past bottom[0]'s shape %s when applied starting with bottom[0] axis = %d",
			what, v.ShapeString(), x.ShapeString(), axis)
	}
	for i, d := range v.Shape() {
		if x.Shape()[axis+i] != d {
			return broadcastShape{}, fmt.Errorf("dimension mismatch between bottom[0]->shape(%d) = %d and %s->shape(%d) = %d (bottom[0] %s, %s %s)",
				axis+i, x.Shape()[axis+i], what, i, d, x.ShapeString(), what, v.ShapeString())
		}
	}
	return broadcastShape{
		outer: x.CountRange(0, axis),
		dim:   v.Count(),
		inner: x.CountFrom(axis + v.NumAxes()),
	}, nil
}

// learnedVectorShape is the shape of a learnable Bias or Scale blob for
// bottom x: x's dimensions from axis over numAxes axes (-1: to the end).
func learnedVectorShape[T Float](what string, x *blob.Blob[T], axisParam, numAxes int) ([]int, error) {
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

// broadcastBuffers are the scratch blobs of sumBroadcast: a ones vector
// and the per-(outer, d) partial sums.
type broadcastBuffers[T Float] struct {
	ones, sums *blob.Blob[T]
}

// reshape sizes the buffers for s (on b's device).
func (bb *broadcastBuffers[T]) reshape(b *Base[T], s broadcastShape) error {
	if err := b.ensureOnes(&bb.ones, max(s.outer, s.inner, 1)); err != nil {
		return err
	}
	if bb.sums == nil {
		nb, err := b.NewBlob()
		if err != nil {
			return err
		}
		bb.sums = nb
	}
	return bb.sums.Reshape([]int{s.outer * s.dim})
}

// sumBroadcast is the adjoint of a broadcast: dst = beta*dst + the sum of
// src (outer x dim x inner) over outer and inner, as gemvs against a ones
// vector (beta 1 accumulates into a parameter's diff, 0 assigns: dst's old
// contents are then never read, so stale NaNs cannot leak in).
func sumBroadcast[T Float, A any](d device.View[T, A], s broadcastShape, bb *broadcastBuffers[T], src A, beta T, dst A) {
	ones := d.Data(bb.ones)
	switch {
	case s.outer == 1 && s.inner == 1 && beta == 0:
		d.Copy(s.dim, src, dst)
	case s.outer == 1 && s.inner == 1:
		d.Axpby(s.dim, 1, src, beta, dst)
	case s.outer == 1:
		d.Gemv(blas.NoTrans, s.dim, s.inner, 1, src, ones, beta, dst)
	case s.inner == 1:
		d.Gemv(blas.Trans, s.outer, s.dim, 1, src, ones, beta, dst)
	default:
		sums := d.MutableData(bb.sums)
		d.Gemv(blas.NoTrans, s.outer*s.dim, s.inner, 1, src, ones, 0, sums)
		d.Gemv(blas.Trans, s.outer, s.dim, 1, sums, ones, beta, dst)
	}
}
