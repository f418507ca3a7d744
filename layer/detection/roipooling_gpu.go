package detection

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// roiPoolingGPU is ROIPooling's GPU half; argmax holds each output's
// source position (as T, -1 for empty bins).
type roiPoolingGPU[T layer.Float] struct {
	l      *roiPoolingLayer[T]
	argmax *blob.Blob[T]
}

func newROIPoolingGPU[T layer.Float](l *roiPoolingLayer[T]) layer.Engine[T] {
	return &roiPoolingGPU[T]{l: l}
}

// Forward pools the regions' bins on the device.
func (e *roiPoolingGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	if err := kit.EnsureBlob(&l.Base, &e.argmax); err != nil {
		return err
	}
	if err := e.argmax.ReshapeLike(top[0]); err != nil {
		return err
	}
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0]))
	kit.ScalarArg(&a, l.scale).Int(l.channels).Int(l.h).Int(l.w).Int(l.pooledH).Int(l.pooledW).
		Ptr(g.Data(bottom[1])).Ptr(g.MutableData(top[0])).Ptr(g.MutableData(e.argmax))
	return launch[T](l.Context(), "roi_pooling.cu", "roi_pool_forward", n, &a)
}

// Backward adds each output's gradient to the element it took, on the
// device.
func (e *roiPoolingGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	l, g := e.l, e.l.GPU()
	g.Set(bottom[0].Count(), 0, g.MutableDiff(bottom[0]))
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(e.argmax)).Ptr(g.Data(bottom[1])).Int(l.channels).Int(l.h * l.w).Int(l.pooledH * l.pooledW).
		Ptr(g.MutableDiff(bottom[0]))
	if err := launch[T](l.Context(), "roi_pooling.cu", "roi_pool_backward", n, &a); err != nil {
		return err
	}
	return g.Err()
}
