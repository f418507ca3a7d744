package neuron

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "AbsVal",
		New32: newAbsVal[float32], New64: newAbsVal[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newAbsValGPU[float32], newAbsValGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// AbsVal computes y = |x|. As in Caffe it does not run in place: the
// backward pass needs the sign of x.
type absValLayer[T layer.Float] struct{ neuron[T] }

func newAbsVal[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &absValLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "AbsVal".
func (*absValLayer[T]) Type() string { return "AbsVal" }

// LayerSetUp refuses to run in place.
func (*absValLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if bottom[0] == top[0] {
		return errors.New("does not allow in-place computation: bottom and top must be different blobs")
	}
	return nil
}

// ForwardCPU computes the absolute value.
func (l *absValLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i, v := range x {
		y[i] = max(v, -v)
	}
	return nil
}

// BackwardCPU computes dx = sign(x) * dy, with sign(0) = 0.
func (l *absValLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	x, dy, dx := bottom[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i, v := range x {
		switch {
		case v > 0:
			dx[i] = dy[i]
		case v < 0:
			dx[i] = -dy[i]
		default:
			dx[i] = 0
		}
	}
	return nil
}
