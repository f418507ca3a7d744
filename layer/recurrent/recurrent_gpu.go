package recurrent

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// gpuRecurrent runs the recurrent layers' element-wise steps as kernels;
// the first launch error is kept for fail.
type gpuRecurrent[T layer.Float] struct {
	*device.GPUView[T]
	ctx *device.Context
	err *error
}

func recurrentGPU[T layer.Float](b *layer.Base[T]) gpuRecurrent[T] {
	return gpuRecurrent[T]{GPUView: b.GPU(), ctx: b.Context(), err: new(error)}
}

func (g gpuRecurrent[T]) run(file, name string, n int, a *cuda.Args) {
	if *g.err != nil {
		return
	}
	*g.err = launch[T](g.ctx, file, name, n, a)
}

func (g gpuRecurrent[T]) contScale(n, hidden int, cont, x, y cuda.DevicePtr) {
	var a cuda.Args
	g.run("lstm_unit.cu", "cont_scale", n, a.Int(n).Int(hidden).Ptr(cont).Ptr(x).Ptr(y))
}

func (g gpuRecurrent[T]) lstmUnitForward(n, hidden int, cPrev, gates, cont, c, h cuda.DevicePtr) {
	var a cuda.Args
	g.run("lstm_unit.cu", "lstm_unit_forward", n, a.Int(n).Int(hidden).Ptr(cPrev).Ptr(gates).Ptr(cont).Ptr(c).Ptr(h))
}

func (g gpuRecurrent[T]) lstmUnitBackward(n, hidden int, cPrev, gates, cont, c, dc, dh, dcPrev, dgates cuda.DevicePtr) {
	var a cuda.Args
	a.Int(n).Int(hidden).Ptr(cPrev).Ptr(gates).Ptr(cont).Ptr(c).Ptr(dc).Ptr(dh).Ptr(dcPrev).Ptr(dgates)
	g.run("lstm_unit.cu", "lstm_unit_backward", n, &a)
}

func (g gpuRecurrent[T]) tanhForward(n int, x, y cuda.DevicePtr) {
	if *g.err == nil {
		*g.err = kit.TanhForward[T](g.ctx, n, x, y)
	}
}

func (g gpuRecurrent[T]) tanhBackward(n int, dy, y, dx cuda.DevicePtr) {
	if *g.err == nil {
		*g.err = kit.TanhBackward[T](g.ctx, n, dy, y, dx)
	}
}

func (g gpuRecurrent[T]) fail() error { return *g.err }

// lstmGPU is LSTM's GPU half.
type lstmGPU[T layer.Float] struct{ l *lstmLayer[T] }

func newLSTMGPU[T layer.Float](l *lstmLayer[T]) layer.Engine[T] { return lstmGPU[T]{l} }

// Forward runs the T steps on the device.
func (e lstmGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return lstmForward[T](l, recurrentGPU(&l.Base), bottom, top)
}

// Backward runs back through time on the device.
func (e lstmGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return lstmBackward[T](l, recurrentGPU(&l.Base), top, propagateDown, bottom)
}

// rnnGPU is RNN's GPU half.
type rnnGPU[T layer.Float] struct{ l *rnnLayer[T] }

func newRNNGPU[T layer.Float](l *rnnLayer[T]) layer.Engine[T] { return rnnGPU[T]{l} }

// Forward runs the T steps on the device.
func (e rnnGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	return rnnForward[T](l, recurrentGPU(&l.Base), bottom, top)
}

// Backward runs back through time on the device.
func (e rnnGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	return rnnBackward[T](l, recurrentGPU(&l.Base), top, propagateDown, bottom)
}
