package neuron

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Clip",
		New32: newClip[float32], New64: newClip[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newClipGPU[float32], newClipGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Clip computes y = max(min, min(max, x)) with clip_param's min and max
// (both required); the gradient passes where min <= x <= max. Run in
// place, it keeps a copy of x: from y alone an x at a bound cannot be told
// from one beyond it (Caffe's Clip gets this wrong in place).
type clipLayer[T layer.Float] struct {
	neuron[T]
	lo, hi T
	input  bottomCopy[T]
}

func newClip[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &clipLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	cp := p.GetClipParam()
	if cp == nil || cp.Min == nil || cp.Max == nil {
		return nil, errors.New("clip_param needs both min and max")
	}
	if cp.GetMin() > cp.GetMax() {
		return nil, errors.New("clip_param: min must not be greater than max")
	}
	l.lo, l.hi = T(cp.GetMin()), T(cp.GetMax())
	return l, nil
}

// Type returns "Clip".
func (*clipLayer[T]) Type() string { return "Clip" }

// Reshape gives the top the bottom's shape and sizes the in-place copy.
func (l *clipLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(bottom[0]); err != nil {
		return err
	}
	return l.input.reshape(&l.Base, bottom[0], top[0])
}

// ForwardCPU clips.
func (l *clipLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if err := saveBottom(&l.input, device.HostView[T]{}, bottom[0], top[0]); err != nil {
		return err
	}
	y := top[0].MutableCPUData()
	for i, v := range bottom[0].CPUData() {
		y[i] = max(l.lo, min(l.hi, v))
	}
	return nil
}

// BackwardCPU passes the gradient inside [min, max].
func (l *clipLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x := l.input.input(bottom[0], top[0]).CPUData()
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		if v >= l.lo && v <= l.hi {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
	return nil
}
