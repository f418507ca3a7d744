package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// dropoutGPU is Dropout's GPU half.
type dropoutGPU[T layer.Float] struct {
	l   *dropoutLayer[T]
	red kit.Reduced[T] // a 16-bit type to compute in (reduced.go)
}

func newDropoutGPU[T layer.Float](l *dropoutLayer[T]) layer.Engine[T] { return &dropoutGPU[T]{l: l} }

// Forward draws uniform numbers into the mask on the device (one key
// from the layer's generator), turns them into the mask and applies it
// (TRAIN), or copies the input (TEST).
func (e *dropoutGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	l := e.l
	g := l.GPU()
	if !l.train() {
		return dropoutPass(g, bottom[0], top[0], false)
	}
	n := bottom[0].Count()
	mask := g.MutableData(l.mask)
	g.RngUniform(n, 0, 1, mask, l.RNG())
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(mask).Ptr(g.MutableData(top[0]))
	kit.ScalarArg(kit.ScalarArg(&a, T(l.ratio)), l.scale)
	return launch[T](l.Context(), "dropout.cu", "dropout_forward", n, &a)
}

// Backward applies the forward pass's mask on the device (TRAIN), or
// passes the gradient through (TEST).
func (e *dropoutGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	if e.red.On() {
		return e.backwardReduced(top, bottom)
	}
	return dropoutBackward(l, l.GPU(), top[0], bottom[0])
}
