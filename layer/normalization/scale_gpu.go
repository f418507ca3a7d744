package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// scaleSumThreads is the block size of scale_param_sums (SCALE_SUM_THREADS
// in scale.cu).
const scaleSumThreads = 256

// scaleGPU is Scale's GPU half. With a learnable scale (one bottom) it runs
// fused kernels: the forward pass reads x once (saving it when in place),
// and the backward pass sums both parameter gradients in one pass over dy
// and x. ResNet's 53 Scale layers took 24 of its 118 ms through the
// general path, which is still used for a scale given as a second bottom.
type scaleGPU[T layer.Float] struct {
	l   *scaleLayer[T]
	red kit.Reduced[T] // a 16-bit type to compute in (scale_reduced.go)
}

func newScaleGPU[T layer.Float](l *scaleLayer[T]) layer.Engine[T] { return &scaleGPU[T]{l: l} }

// Forward scales on the device.
func (e *scaleGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	if len(bottom) == 2 {
		return scaleForward[T](l, kit.GPUBroadcasterOf(&l.Base), bottom, top)
	}
	g := l.GPU()
	n := bottom[0].Count()
	var save, bias cuda.DevicePtr // null: not in place, no bias
	if bottom[0] == top[0] {
		save = g.MutableData(l.temp)
	}
	if l.biasIndex >= 0 {
		bias = g.Data(l.Blobs()[l.biasIndex])
	}
	var a cuda.Args
	a.Int(n).Int(l.shape.Dim).Int(l.shape.Inner).Ptr(g.Data(bottom[0])).Ptr(g.Data(l.Blobs()[0])).Ptr(bias).Ptr(g.MutableData(top[0])).Ptr(save)
	if err := launch[T](l.Context(), "scale.cu", "scale_forward", n, &a); err != nil {
		return err
	}
	return g.Err()
}

// Backward computes the gradients on the device: the parameters' first,
// since in place dx overwrites dy.
func (e *scaleGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if l.ForwardSkipped() && bottom[0] == top[0] {
		// In place, the backward pass needs the input the forward pass
		// saves; the BatchNorm before computed that pass (Fuse) and saved
		// none.
		return fmt.Errorf("its forward pass was computed by the BatchNorm before it (fused), so its input was not kept: run a forward pass that computes it alone (a ForwardFromTo range that splits the two) before a backward pass that does")
	}
	if e.red.On() {
		return e.backwardReduced(top, propagateDown, bottom)
	}
	if len(bottom) == 2 {
		return scaleBackward[T](l, kit.GPUBroadcasterOf(&l.Base), top, propagateDown, bottom)
	}
	g := l.GPU()
	dy := g.Diff(top[0])
	var db, ds cuda.DevicePtr
	if l.biasIndex >= 0 && l.ParamPropagateDown(l.biasIndex) {
		db = g.MutableDiff(l.Blobs()[l.biasIndex])
	}
	if l.ParamPropagateDown(0) {
		ds = g.MutableDiff(l.Blobs()[0])
	}
	if (db != 0 || ds != 0) && bottom[0].Count() > 0 {
		x := g.Data(bottom[0])
		if bottom[0] == top[0] {
			x = g.Data(l.temp)
		}
		f, err := kernel[T](l.Context(), "scale.cu", "scale_param_sums")
		if err != nil {
			return err
		}
		var a cuda.Args
		a.Int(l.shape.Outer).Int(l.shape.Dim).Int(l.shape.Inner).Ptr(dy).Ptr(x).Ptr(db).Ptr(ds)
		if err := f.Launch(cuda.Dim3{X: l.shape.Dim}, cuda.Dim3{X: scaleSumThreads}, 0, nil, &a); err != nil {
			return err
		}
	}
	if propagateDown[0] {
		n := bottom[0].Count()
		if err := kit.GPUBroadcasterOf(&l.Base).Broadcast(kit.BroadcastMul, n, l.shape.Dim, l.shape.Inner, dy, g.Data(l.Blobs()[0]), g.MutableDiff(bottom[0])); err != nil {
			return err
		}
	}
	return g.Err()
}
