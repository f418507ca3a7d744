package vision

import (
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Crop",
		New32: newCrop[float32], New64: newCrop[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newCropGPU[float32], newCropGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Crop cuts a window out of bottom 0: from crop_param.axis (default 2) on,
// the top takes bottom 1's dimensions, starting at crop_param.offset (none:
// 0; one: the same for every cropped axis; otherwise one per cropped axis).
// The axes before axis are kept whole. Bottom 1 only supplies the shape.
type cropLayer[T layer.Float] struct {
	layer.Base[T]
	offsets []int // per axis of bottom 0; 0 for the uncropped axes
	shape   []int // the top's shape
	index   []int // the odometer over the top's rows, kept between passes
}

func newCrop[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &cropLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Crop".
func (*cropLayer[T]) Type() string { return "Crop" }

// Counts returns two bottoms (data and shape) and one top.
func (*cropLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do: the crop depends on the bottoms' shapes.
func (*cropLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape computes the offsets and the top's shape, checking that the
// window lies inside bottom 0.
func (l *cropLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	cp := l.Param().GetCropParam()
	data, ref := bottom[0], bottom[1]
	start, err := data.CanonicalAxisIndex(int(cp.GetAxis()))
	if err != nil {
		return fmt.Errorf("crop_param.axis: %w", err)
	}
	n := data.NumAxes()
	offs := cp.GetOffset()
	if len(offs) > 1 && start+len(offs) != n {
		return fmt.Errorf("%d offsets given for axes %d to %d of the %d-D input %s: the number of offsets must be 0, 1 or equal to the number of axes cropped (%d)",
			len(offs), start, n-1, n, data.ShapeString(), n-start)
	}
	if ref.NumAxes() < n {
		return fmt.Errorf("the reference bottom 1 %s has fewer axes than the input %s", ref.ShapeString(), data.ShapeString())
	}
	l.offsets = zeroedIntSlice(l.offsets, n)
	l.shape = append(l.shape[:0], data.Shape()...)
	for i := start; i < n; i++ {
		off := 0
		switch {
		case len(offs) == 1:
			off = int(offs[0])
		case len(offs) > 1:
			off = int(offs[i-start])
		}
		size := ref.Shape()[i]
		if off+size > data.Shape()[i] {
			return fmt.Errorf("the crop for axis %d is out of bounds: size %d at offset %d exceeds the input's %d (bottom 0 %s, bottom 1 %s)",
				i, size, off, data.Shape()[i], data.ShapeString(), ref.ShapeString())
		}
		l.offsets[i], l.shape[i] = off, size
	}
	l.index = zeroedIntSlice(l.index, n)
	return top[0].Reshape(l.shape)
}

// cropCPU copies the window of big (bottom 0's layout) to small (the top's
// layout), or back when toBig, one contiguous last-axis row at a time.
func (l *cropLayer[T]) cropCPU(bottomShape []int, big, small []T, toBig bool) {
	n := len(l.shape)
	row := l.shape[n-1]
	if row == 0 {
		return
	}
	idx := l.index
	clear(idx)
	for s := 0; s < len(small); s += row {
		b := 0
		for a := range n {
			b = b*bottomShape[a] + idx[a] + l.offsets[a]
		}
		if toBig {
			copy(big[b:b+row], small[s:s+row])
		} else {
			copy(small[s:s+row], big[b:b+row])
		}
		// Advance the odometer over the axes before the last.
		for a := n - 2; a >= 0; a-- {
			if idx[a]++; idx[a] < l.shape[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// ForwardCPU copies the window into the top.
func (l *cropLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	l.cropCPU(bottom[0].Shape(), bottom[0].CPUData(), top[0].MutableCPUData(), false)
	return nil
}

// BackwardCPU writes the top's diff into the window of a zeroed bottom 0
// diff. Bottom 1 only gives a shape: its gradient is zero.
func (l *cropLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if err := kit.ZeroPropagatedDiffs[T](device.HostView[T]{}, propagateDown, bottom); err != nil {
		return err
	}
	if propagateDown[0] {
		l.cropCPU(bottom[0].Shape(), bottom[0].MutableCPUDiff(), top[0].CPUDiff(), true)
	}
	return nil
}

// zeroedIntSlice returns s resized to n zeros, reusing its storage.
func zeroedIntSlice(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// Offsets returns, for each axis of the first bottom, where the Crop's
// window starts (0 on the axes it leaves whole), as of its last Reshape.
func (l *cropLayer[T]) Offsets() []int { return slices.Clone(l.offsets) }
