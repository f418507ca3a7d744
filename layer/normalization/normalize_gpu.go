package normalization

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// normalizeGPU is Normalize's GPU half; norm and dots hold a value per
// group (image, or image and position).
type normalizeGPU[T layer.Float] struct {
	l          *normalizeLayer[T]
	norm, dots *blob.Blob[T]
}

func newNormalizeGPU[T layer.Float](l *normalizeLayer[T]) layer.Engine[T] {
	return &normalizeGPU[T]{l: l}
}

// geometry appends num-independent arguments: channels, spatial, across,
// shared.
func (e *normalizeGPU[T]) geometry(a *cuda.Args) *cuda.Args {
	l := e.l
	return a.Int(l.channels).Int(l.spatial).Int(kit.Btoi(l.acrossSpatial)).Int(kit.Btoi(l.shared))
}

// Forward computes the norms, then the scaled output, on the device.
func (e *normalizeGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	groups := len(l.norm)
	if err := kit.EnsureBlob(&l.Base, &e.norm); err != nil {
		return err
	}
	if err := kit.EnsureBlob(&l.Base, &e.dots); err != nil {
		return err
	}
	if err := e.norm.Reshape([]int{groups}); err != nil {
		return err
	}
	if err := e.dots.Reshape([]int{groups}); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(groups).Int(l.channels).Int(l.spatial).Int(kit.Btoi(l.acrossSpatial)).Ptr(g.Data(bottom[0]))
	kit.ScalarArg(&a, T(l.eps)).Ptr(g.MutableData(e.norm))
	if err := launch[T](l.Context(), "normalize.cu", "normalize_norms", groups, &a); err != nil {
		return err
	}
	n := bottom[0].Count()
	var f cuda.Args
	e.geometry(f.Int(n)).Ptr(g.Data(bottom[0])).Ptr(g.Data(e.norm)).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.Context(), "normalize.cu", "normalize_forward", n, &f)
}

// Backward computes the scale's gradient and the bottom's on the device.
func (e *normalizeGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	x, dy := g.Data(bottom[0]), g.Diff(top[0])
	if l.ParamPropagateDown(0) {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Int(kit.Btoi(l.acrossSpatial)).Int(kit.Btoi(l.shared)).
			Ptr(x).Ptr(dy).Ptr(g.Data(e.norm)).Ptr(g.MutableDiff(l.Blobs()[0]))
		if err := launch[T](l.Context(), "normalize.cu", "normalize_scale_diff", l.Blobs()[0].Count(), &a); err != nil {
			return err
		}
	}
	if !propagateDown[0] {
		return nil
	}
	groups := len(l.norm)
	var d cuda.Args
	d.Int(groups).Int(l.channels).Int(l.spatial).Int(kit.Btoi(l.acrossSpatial)).Int(kit.Btoi(l.shared)).
		Ptr(x).Ptr(dy).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableData(e.dots))
	if err := launch[T](l.Context(), "normalize.cu", "normalize_dots", groups, &d); err != nil {
		return err
	}
	n := bottom[0].Count()
	var b cuda.Args
	e.geometry(b.Int(n)).Ptr(x).Ptr(dy).Ptr(g.Data(e.norm)).Ptr(g.Data(e.dots)).Ptr(g.Data(l.Blobs()[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "normalize.cu", "normalize_backward", n, &b)
}
