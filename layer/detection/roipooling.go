package detection

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "ROIPooling",
		New32: newROIPooling[float32], New64: newROIPooling[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newROIPoolingGPU[float32], newROIPoolingGPU[float64])},
		ONNXWhy:  "gocaffe writes no ONNX form of it",
		NoGolden: "BVLC Caffe has no such layer: it is Faster R-CNN's (rbgirshick/caffe-fast-rcnn)",
	})
}

// ROIPooling is Fast/Faster R-CNN's region pooling
// (rbgirshick/caffe-fast-rcnn; roi_pooling_param): for each region
// (batch index, x1, y1, x2, y2 in image pixels) of the second bottom, the
// region scaled by spatial_scale and rounded onto the feature map (the
// first bottom) is divided into pooled_h x pooled_w bins, and each bin's
// maximum is taken per channel; an empty bin gives 0. The top is
// regions x channels x pooled_h x pooled_w. Backward sends each output's
// gradient to the element it took (the regions get none), as the fork's
// GPU half does (its CPU backward was never written).
type roiPoolingLayer[T layer.Float] struct {
	layer.Base[T]
	pooledH, pooledW int
	scale            T
	channels, h, w   int
	argmax           []int // per top element: the index in its image's channel plane, -1 for empty bins
}

func newROIPooling[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &roiPoolingLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	rp := p.GetRoiPoolingParam()
	l.pooledH, l.pooledW, l.scale = int(rp.GetPooledH()), int(rp.GetPooledW()), T(rp.GetSpatialScale())
	if l.pooledH <= 0 || l.pooledW <= 0 {
		return nil, errors.New("roi_pooling_param: pooled_h and pooled_w must be > 0")
	}
	return l, nil
}

// Type returns "ROIPooling".
func (*roiPoolingLayer[T]) Type() string { return "ROIPooling" }

// Counts: the feature map and the regions.
func (*roiPoolingLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// AllowForceBackward refuses the regions: their coordinates get no
// gradient.
func (*roiPoolingLayer[T]) AllowForceBackward(i int) bool { return i == 0 }

// LayerSetUp has nothing more to set up.
func (*roiPoolingLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top for the regions.
func (l *roiPoolingLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0].NumAxes() != 4 {
		return fmt.Errorf("the feature map %s must be 4-D", bottom[0].ShapeString())
	}
	if bottom[1].NumAxes() < 2 || bottom[1].CountFrom(1) != 5 {
		return fmt.Errorf("the regions %s must be R x 5 (batch index, x1, y1, x2, y2)", bottom[1].ShapeString())
	}
	s := bottom[0].Shape()
	l.channels, l.h, l.w = s[1], s[2], s[3]
	n := bottom[1].Shape()[0] * l.channels * l.pooledH * l.pooledW
	l.argmax = kit.Grow(l.argmax, n)
	return top[0].Reshape([]int{bottom[1].Shape()[0], l.channels, l.pooledH, l.pooledW})
}

// ForwardCPU max-pools each region's bins.
func (l *roiPoolingLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, rois, y := bottom[0].CPUData(), bottom[1].CPUData(), top[0].MutableCPUData()
	batch, plane := bottom[0].Shape()[0], l.h*l.w
	bins := l.pooledH * l.pooledW
	for r := range bottom[1].Shape()[0] {
		roi := rois[5*r : 5*r+5]
		img := int(roi[0])
		if img < 0 || img >= batch {
			return fmt.Errorf("region %d names image %v of a batch of %d", r, roi[0], batch)
		}
		x1, y1 := int(math.Round(float64(roi[1]*l.scale))), int(math.Round(float64(roi[2]*l.scale)))
		x2, y2 := int(math.Round(float64(roi[3]*l.scale))), int(math.Round(float64(roi[4]*l.scale)))
		binH := T(max(y2-y1+1, 1)) / T(l.pooledH)
		binW := T(max(x2-x1+1, 1)) / T(l.pooledW)
		for c := range l.channels {
			src := x[(img*l.channels+c)*plane : (img*l.channels+c+1)*plane]
			out := (r*l.channels + c) * bins
			for ph := range l.pooledH {
				h0 := clampInt(int(math.Floor(float64(T(ph)*binH)))+y1, 0, l.h)
				h1 := clampInt(int(math.Ceil(float64(T(ph+1)*binH)))+y1, 0, l.h)
				for pw := range l.pooledW {
					w0 := clampInt(int(math.Floor(float64(T(pw)*binW)))+x1, 0, l.w)
					w1 := clampInt(int(math.Ceil(float64(T(pw+1)*binW)))+x1, 0, l.w)
					best, at := T(0), -1
					if h1 > h0 && w1 > w0 {
						best = T(-math.MaxFloat32)
					}
					for hh := h0; hh < h1; hh++ {
						for ww := w0; ww < w1; ww++ {
							if v := src[hh*l.w+ww]; v > best {
								best, at = v, hh*l.w+ww
							}
						}
					}
					y[out+ph*l.pooledW+pw], l.argmax[out+ph*l.pooledW+pw] = best, at
				}
			}
		}
	}
	return nil
}

func clampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// BackwardCPU adds each output's gradient to the element it took.
func (l *roiPoolingLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dx, dy, rois := bottom[0].MutableCPUDiff(), top[0].CPUDiff(), bottom[1].CPUData()
	clear(dx)
	plane, bins := l.h*l.w, l.pooledH*l.pooledW
	for i, at := range l.argmax {
		if at < 0 {
			continue
		}
		r, c := i/(l.channels*bins), i/bins%l.channels
		img := int(rois[5*r])
		dx[(img*l.channels+c)*plane+at] += dy[i]
	}
	return nil
}
