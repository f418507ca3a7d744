package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// cropGPU is Crop's GPU half.
type cropGPU[T layer.Float] struct{ l *cropLayer[T] }

func newCropGPU[T layer.Float](l *cropLayer[T]) layer.Engine[T] { return cropGPU[T]{l} }

// cropGeom appends the kernels' struct CropGeom (axes, window shape,
// bottom 0's shape, offsets), passed by value so that a pass needs no
// device buffer.
func (l *cropLayer[T]) cropGeom(a *cuda.Args, bottomShape []int) *cuda.Args {
	const m = blob.MaxAxes
	var p [1 + 3*m]int32
	p[0] = int32(len(l.shape))
	for i := range l.shape {
		p[1+i], p[1+m+i], p[1+2*m+i] = int32(l.shape[i]), int32(bottomShape[i]), int32(l.offsets[i])
	}
	return a.Int32s(p[:])
}

// cropGPU copies the window between big (bottom 0's layout) and small (the
// top's) on the device.
func (l *cropLayer[T]) cropGPU(bottomShape []int, src, dst cuda.DevicePtr, count int, toBig bool) error {
	flag := 0
	if toBig {
		flag = 1
	}
	var a cuda.Args
	l.cropGeom(a.Int(count), bottomShape).Ptr(src).Ptr(dst).Int(flag)
	return launch[T](l.Context(), "crop.cu", "crop_copy", count, &a)
}

// Forward copies the window into the top on the device.
func (e cropGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	return l.cropGPU(bottom[0].Shape(), g.Data(bottom[0]), g.MutableData(top[0]), top[0].Count(), false)
}

// Backward writes the top's diff into the window of a zeroed bottom 0
// diff on the device; bottom 1's gradient is zero.
func (e cropGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if err := kit.ZeroPropagatedDiffs[T](g, propagateDown, bottom); err != nil {
		return err
	}
	if !propagateDown[0] {
		return nil
	}
	return l.cropGPU(bottom[0].Shape(), g.Diff(top[0]), g.MutableDiff(bottom[0]), top[0].Count(), true)
}
