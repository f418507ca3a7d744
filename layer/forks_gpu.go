package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// The GPU halves of the forks' layers that sit in the middle of a net
// (SSD's Permute and Normalize, SENet's Axpy, Faster R-CNN's ROIPooling),
// so that a net on the GPU does not copy their blobs to the host and back.
// Their kernels are in kernels/forks.cu.

func init() {
	registerGPU("Permute", newPermuteGPU[float32], newPermuteGPU[float64])
	registerGPU("Axpy", newAxpyGPU[float32], newAxpyGPU[float64])
	registerGPU("Normalize", newNormalizeGPU[float32], newNormalizeGPU[float64])
	registerGPU("ROIPooling", newROIPoolingGPU[float32], newROIPoolingGPU[float64])
}

// permuteGPU is Permute's GPU half.
type permuteGPU[T Float] struct{ l *Permute[T] }

func newPermuteGPU[T Float](l *Permute[T]) Engine[T] { return permuteGPU[T]{l} }

// run copies between the layouts (x the bottom's, y the top's; backward
// writes x), the kernels' struct PermuteSteps passed by value.
func (e permuteGPU[T]) run(x, y cuda.DevicePtr, n int, backward bool) error {
	l := e.l
	const m = blob.MaxAxes
	var steps [1 + 2*m]int32
	steps[0] = int32(len(l.order))
	for i := range l.order {
		steps[1+i], steps[1+m+i] = int32(l.oldSteps[i]), int32(l.newSteps[i])
	}
	var a cuda.Args
	a.Int(n).Int32s(steps[:]).Ptr(x).Ptr(y).Int(b2i(backward))
	return launch[T](l.ctx, "forks.cu", "permute", n, &a)
}

// Forward reorders the data on the device.
func (e permuteGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	g := e.l.gpu()
	return e.run(g.Data(bottom[0]), g.MutableData(top[0]), top[0].Count(), false)
}

// Backward reorders the gradient back on the device.
func (e permuteGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := e.l.gpu()
	return e.run(g.MutableDiff(bottom[0]), g.Diff(top[0]), top[0].Count(), true)
}

// axpyGPU is Axpy's GPU half.
type axpyGPU[T Float] struct{ l *Axpy[T] }

func newAxpyGPU[T Float](l *Axpy[T]) Engine[T] { return axpyGPU[T]{l} }

// Forward computes a * x + y on the device.
func (e axpyGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.Data(bottom[1])).Ptr(g.Data(bottom[2])).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, "forks.cu", "axpy_forward", n, &a)
}

// Backward computes da, dx and dy on the device.
func (e axpyGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	n := top[0].Count()
	if propagateDown[0] {
		var a cuda.Args
		a.Int(l.planes).Int(l.spatial).Ptr(g.Diff(top[0])).Ptr(g.Data(bottom[1])).Ptr(g.MutableDiff(bottom[0]))
		if err := launch[T](l.ctx, "forks.cu", "axpy_da", l.planes, &a); err != nil {
			return err
		}
	}
	if propagateDown[1] {
		var a cuda.Args
		a.Int(n).Int(l.spatial).Ptr(g.Data(bottom[0])).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[1]))
		if err := launch[T](l.ctx, "forks.cu", "axpy_dx", n, &a); err != nil {
			return err
		}
	}
	if propagateDown[2] {
		g.Copy(n, g.Diff(top[0]), g.MutableDiff(bottom[2]))
	}
	return g.Err()
}

// normalizeGPU is Normalize's GPU half; norm and dots hold a value per
// group (image, or image and position).
type normalizeGPU[T Float] struct {
	l          *Normalize[T]
	norm, dots *blob.Blob[T]
}

func newNormalizeGPU[T Float](l *Normalize[T]) Engine[T] { return &normalizeGPU[T]{l: l} }

// ensureBlob makes *b, a device buffer of the layer, on first use.
func ensureBlob[T Float](base *Base[T], b **blob.Blob[T]) error {
	if *b != nil {
		return nil
	}
	var err error
	*b, err = base.NewBlob()
	return err
}

// geometry appends num-independent arguments: channels, spatial, across,
// shared.
func (e *normalizeGPU[T]) geometry(a *cuda.Args) *cuda.Args {
	l := e.l
	return a.Int(l.channels).Int(l.spatial).Int(b2i(l.acrossSpatial)).Int(b2i(l.shared))
}

// Forward computes the norms, then the scaled output, on the device.
func (e *normalizeGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	groups := len(l.norm)
	if err := ensureBlob(&l.Base, &e.norm); err != nil {
		return err
	}
	if err := ensureBlob(&l.Base, &e.dots); err != nil {
		return err
	}
	if err := e.norm.Reshape([]int{groups}); err != nil {
		return err
	}
	if err := e.dots.Reshape([]int{groups}); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(groups).Int(l.channels).Int(l.spatial).Int(b2i(l.acrossSpatial)).Ptr(g.Data(bottom[0]))
	scalarArg(&a, T(l.eps)).Ptr(g.MutableData(e.norm))
	if err := launch[T](l.ctx, "forks.cu", "normalize_norms", groups, &a); err != nil {
		return err
	}
	n := bottom[0].Count()
	var f cuda.Args
	e.geometry(f.Int(n)).Ptr(g.Data(bottom[0])).Ptr(g.Data(e.norm)).Ptr(g.Data(l.blobs[0])).Ptr(g.MutableData(top[0]))
	return launch[T](l.ctx, "forks.cu", "normalize_forward", n, &f)
}

// Backward computes the scale's gradient and the bottom's on the device.
func (e *normalizeGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	x, dy := g.Data(bottom[0]), g.Diff(top[0])
	if l.ParamPropagateDown(0) {
		var a cuda.Args
		a.Int(l.num).Int(l.channels).Int(l.spatial).Int(b2i(l.acrossSpatial)).Int(b2i(l.shared)).
			Ptr(x).Ptr(dy).Ptr(g.Data(e.norm)).Ptr(g.MutableDiff(l.blobs[0]))
		if err := launch[T](l.ctx, "forks.cu", "normalize_scale_diff", l.blobs[0].Count(), &a); err != nil {
			return err
		}
	}
	if !propagateDown[0] {
		return nil
	}
	groups := len(l.norm)
	var d cuda.Args
	d.Int(groups).Int(l.channels).Int(l.spatial).Int(b2i(l.acrossSpatial)).Int(b2i(l.shared)).
		Ptr(x).Ptr(dy).Ptr(g.Data(l.blobs[0])).Ptr(g.MutableData(e.dots))
	if err := launch[T](l.ctx, "forks.cu", "normalize_dots", groups, &d); err != nil {
		return err
	}
	n := bottom[0].Count()
	var b cuda.Args
	e.geometry(b.Int(n)).Ptr(x).Ptr(dy).Ptr(g.Data(e.norm)).Ptr(g.Data(e.dots)).Ptr(g.Data(l.blobs[0])).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.ctx, "forks.cu", "normalize_backward", n, &b)
}

// roiPoolingGPU is ROIPooling's GPU half; argmax holds each output's
// source position (as T, -1 for empty bins).
type roiPoolingGPU[T Float] struct {
	l      *ROIPooling[T]
	argmax *blob.Blob[T]
}

func newROIPoolingGPU[T Float](l *ROIPooling[T]) Engine[T] { return &roiPoolingGPU[T]{l: l} }

// Forward pools the regions' bins on the device.
func (e *roiPoolingGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.gpu()
	if err := ensureBlob(&l.Base, &e.argmax); err != nil {
		return err
	}
	if err := e.argmax.ReshapeLike(top[0]); err != nil {
		return err
	}
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0]))
	scalarArg(&a, l.scale).Int(l.channels).Int(l.h).Int(l.w).Int(l.pooledH).Int(l.pooledW).
		Ptr(g.Data(bottom[1])).Ptr(g.MutableData(top[0])).Ptr(g.MutableData(e.argmax))
	return launch[T](l.ctx, "forks.cu", "roi_pool_forward", n, &a)
}

// Backward adds each output's gradient to the element it took, on the
// device.
func (e *roiPoolingGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.gpu()
	g.Set(bottom[0].Count(), 0, g.MutableDiff(bottom[0]))
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(e.argmax)).Ptr(g.Data(bottom[1])).Int(l.channels).Int(l.h * l.w).Int(l.pooledH * l.pooledW).
		Ptr(g.MutableDiff(bottom[0]))
	if err := launch[T](l.ctx, "forks.cu", "roi_pool_backward", n, &a); err != nil {
		return err
	}
	return g.Err()
}
