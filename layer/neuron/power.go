package neuron

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Power",
		New32: newPower[float32], New64: newPower[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newPowerGPU[float32], newPowerGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Power computes y = (shift + scale * x)^power (power_param, defaults 1, 1,
// 0). As in Caffe, when power or scale is 0 the input is ignored: y is 1
// for power 0, shift^power otherwise, and the gradient is 0. Run in place,
// it keeps a copy of x for the backward pass.
type powerLayer[T layer.Float] struct {
	neuron[T]
	power, scale, shift float64
	// diffScale is power * scale, the factor of the gradient (Caffe's
	// diff_scale_).
	diffScale float64
	input     bottomCopy[T]
}

func newPower[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &powerLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	pp := p.GetPowerParam()
	l.power, l.scale, l.shift = float64(pp.GetPower()), float64(pp.GetScale()), float64(pp.GetShift())
	l.diffScale = l.power * l.scale
	return l, nil
}

// Type returns "Power".
func (*powerLayer[T]) Type() string { return "Power" }

// ignoresInput reports whether y is a constant: power or scale is 0.
func (l *powerLayer[T]) ignoresInput() bool { return l.diffScale == 0 }

// needsInput reports whether the gradient depends on x: not when it is a
// constant (the input ignored, or power 1).
func (l *powerLayer[T]) needsInput() bool { return !l.ignoresInput() && l.power != 1 }

// Reshape gives the top the bottom's shape and sizes the in-place copy when
// the gradient needs x.
func (l *powerLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if !l.needsInput() {
		return nil
	}
	return l.input.reshape(&l.Base, bottom[0], top[0])
}

// powerConstant fills the top when the input is ignored: 1 for power 0,
// shift^power otherwise.
func powerConstant[T layer.Float, A any](l *powerLayer[T], d device.View[T, A], top *blob.Blob[T]) error {
	c := T(1)
	if l.power != 0 {
		c = T(math.Pow(l.shift, l.power))
	}
	d.Set(top.Count(), c, d.MutableData(top))
	return d.Err()
}

// powerConstantBackward computes a gradient that does not depend on x: 0
// when the input is ignored, dy * scale for power 1.
func powerConstantBackward[T layer.Float, A any](l *powerLayer[T], d device.View[T, A], top, bottom *blob.Blob[T]) error {
	n := bottom.Count()
	if l.ignoresInput() {
		d.Set(n, 0, d.MutableDiff(bottom))
	} else {
		d.Scale(n, T(l.diffScale), d.Diff(top), d.MutableDiff(bottom))
	}
	return d.Err()
}

// ForwardCPU computes the power of the shifted, scaled input.
func (l *powerLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.ignoresInput() {
		return powerConstant(l, device.HostView[T]{}, top[0])
	}
	if l.needsInput() {
		if err := saveBottom(&l.input, device.HostView[T]{}, bottom[0], top[0]); err != nil {
			return err
		}
	}
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		y[i] = T(math.Pow(l.shift+l.scale*float64(v), l.power))
	}
	return nil
}

// BackwardCPU computes dx = dy * power * scale * (shift + scale *
// x)^(power - 1), with Caffe's special cases: 0 when the input is ignored,
// dy * scale for power 1, and no pow call for power 2.
func (l *powerLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	if !l.needsInput() {
		return powerConstantBackward(l, device.HostView[T]{}, top[0], bottom[0])
	}
	x := l.input.input(bottom[0], top[0]).CPUData()
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		base := l.shift + l.scale*float64(v)
		var g float64
		if l.power == 2 {
			g = l.diffScale * base
		} else {
			g = l.diffScale * math.Pow(base, l.power-1)
		}
		dx[i] = dy[i] * T(g)
	}
	return nil
}
