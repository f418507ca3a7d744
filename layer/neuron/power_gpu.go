package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// powerGPU is Power's GPU half.
type powerGPU[T layer.Float] struct{ l *powerLayer[T] }

func newPowerGPU[T layer.Float](l *powerLayer[T]) layer.Engine[T] { return powerGPU[T]{l} }

// Forward computes the power on the device.
func (e powerGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	if l.ignoresInput() {
		return powerConstant(l, g, top[0])
	}
	if l.needsInput() {
		if err := saveBottom(&l.input, g, bottom[0], top[0]); err != nil {
			return err
		}
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0]))
	kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, T(l.power)), T(l.scale)), T(l.shift))
	return launch[T](l.Context(), "power.cu", "power_forward", n, &a)
}

// Backward computes the bottom's gradient on the device.
func (e powerGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	if !l.needsInput() {
		return powerConstantBackward(l, g, top[0], bottom[0])
	}
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.Data(l.input.input(bottom[0], top[0]))).Ptr(g.MutableDiff(bottom[0]))
	kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, T(l.power)), T(l.scale)), T(l.shift)), T(l.diffScale))
	return launch[T](l.Context(), "power.cu", "power_backward", n, &a)
}
