package vision

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Upsample",
		New32: newUpsample[float32], New64: newUpsample[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newUpsampleGPU[float32], newUpsampleGPU[float64])},
		ONNXWhy:  "gocaffe writes no ONNX form of it",
		NoGolden: "BVLC Caffe has no such layer: it is SegNet's (alexgkendall/caffe-segnet)",
	})
}

// Upsample is SegNet's unpooling (alexgkendall/caffe-segnet;
// upsample_param): bottom 0 holds pooled values, bottom 1 the positions a
// MAX Pooling layer took them from (its second top), and each value goes
// back to its position in a zeroed top of upsample_h x upsample_w, or of
// the input's size times scale (scale_h, scale_w; pad_out_h/_w take one
// off for odd sizes with scale 2). Backward gathers the gradients from
// those positions.
type upsampleLayer[T layer.Float] struct {
	layer.Base[T]
	outH, outW       int // 0: from the scales
	scaleH, scaleW   int
	padOutH, padOutW bool
	h, w             int // the top's plane
}

func newUpsample[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &upsampleLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	up := p.GetUpsampleParam()
	if up == nil {
		up = &caffepb.UpsampleParameter{}
	}
	switch {
	case up.UpsampleH != nil && up.UpsampleW != nil:
		l.outH, l.outW = int(up.GetUpsampleH()), int(up.GetUpsampleW())
		if l.outH <= 1 || l.outW <= 1 {
			return nil, fmt.Errorf("upsample_h and upsample_w must be greater than 1, got %d x %d", l.outH, l.outW)
		}
		return l, nil
	case up.ScaleH != nil && up.ScaleW != nil && up.Scale == nil:
		l.scaleH, l.scaleW = int(up.GetScaleH()), int(up.GetScaleW())
	case up.ScaleH == nil && up.ScaleW == nil:
		l.scaleH, l.scaleW = int(up.GetScale()), int(up.GetScale())
	default:
		return nil, errors.New("upsample_h and upsample_w are required, or else scale, or scale_h and scale_w")
	}
	if l.scaleH <= 1 || l.scaleW <= 1 {
		return nil, fmt.Errorf("scales must be greater than 1, got %d x %d", l.scaleH, l.scaleW)
	}
	l.padOutH, l.padOutW = up.GetPadOutH(), up.GetPadOutW()
	if (l.padOutH && l.scaleH != 2) || (l.padOutW && l.scaleW != 2) {
		return nil, errors.New("pad_out_h and pad_out_w need a scale of 2")
	}
	return l, nil
}

// Type returns "Upsample".
func (*upsampleLayer[T]) Type() string { return "Upsample" }

// Counts: the values and their positions.
func (*upsampleLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// AllowForceBackward refuses the positions.
func (*upsampleLayer[T]) AllowForceBackward(i int) bool { return i == 0 }

// LayerSetUp has nothing more to set up.
func (*upsampleLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks that the positions match the values and sizes the top.
func (l *upsampleLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	x, mask := bottom[0], bottom[1]
	if x.NumAxes() != 4 || !x.SameShape(mask) {
		return fmt.Errorf("values %s and positions %s must share one 4-D shape", x.ShapeString(), mask.ShapeString())
	}
	s := x.Shape()
	l.h, l.w = l.outH, l.outW
	if l.h == 0 {
		l.h, l.w = s[2]*l.scaleH-kit.Btoi(l.padOutH), s[3]*l.scaleW-kit.Btoi(l.padOutW)
	}
	return top[0].Reshape([]int{s[0], s[1], l.h, l.w})
}

// position checks and returns the top position a value goes to.
func (l *upsampleLayer[T]) position(mask T, bottomIndex int) (int, error) {
	p := int(mask)
	if p < 0 || p >= l.h*l.w {
		return 0, fmt.Errorf("position %v of value %d is outside the %d x %d output: check the scale against the pooling layer's", mask, bottomIndex, l.h, l.w)
	}
	return p, nil
}

// ForwardCPU scatters the values to their positions.
func (l *upsampleLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, mask, y := bottom[0].CPUData(), bottom[1].CPUData(), top[0].MutableCPUData()
	clear(y)
	in, out := bottom[0].CountFrom(2), l.h*l.w
	for i, v := range x {
		p, err := l.position(mask[i], i)
		if err != nil {
			return err
		}
		y[i/in*out+p] = v
	}
	return nil
}

// BackwardCPU gathers the gradients from the positions.
func (l *upsampleLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	mask, dy, dx := bottom[1].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	in, out := bottom[0].CountFrom(2), l.h*l.w
	for i := range dx {
		p, err := l.position(mask[i], i)
		if err != nil {
			return err
		}
		dx[i] = dy[i/in*out+p]
	}
	return nil
}
