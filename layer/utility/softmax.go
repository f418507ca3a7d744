package utility

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Softmax",
		BackwardReads: layer.Reads(layer.BackwardReadsTop),
		New32:         newSoftmax[float32], New64: newSoftmax[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName {
			return layer.EngineName(p.GetSoftmaxParam().GetEngine())
		},
		Engines:   []layer.EngineDef{layer.GPUEngine(newSoftmaxGPU[float32], newSoftmaxGPU[float64]), layer.CuDNNEngine(false, nil, newSoftmaxDNN[float32], newSoftmaxDNN[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Softmax normalises along `axis` (default 1): top = exp(x - max) / sum,
// with the maximum subtracted for stability. The axes before it are outer,
// the ones after it inner.
type softmaxLayer[T layer.Float] struct {
	layer.Base[T]
	outer, channels, inner int
}

func newSoftmax[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &softmaxLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Softmax".
func (*softmaxLayer[T]) Type() string { return "Softmax" }

// Counts returns one bottom and one top.
func (*softmaxLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do.
func (*softmaxLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape gives the top the bottom's shape.
func (l *softmaxLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := bottom[0].CanonicalAxisIndex(int(l.Param().GetSoftmaxParam().GetAxis()))
	if err != nil {
		return err
	}
	l.outer, l.channels, l.inner = bottom[0].CountRange(0, axis), bottom[0].Shape()[axis], bottom[0].CountFrom(axis+1)
	return top[0].ReshapeLike(bottom[0])
}

// ForwardCPU computes the softmax of each (outer, inner) position's
// channels.
func (l *softmaxLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	dim := l.channels * l.inner
	for i := range l.outer {
		for k := range l.inner {
			base := i*dim + k
			m := x[base]
			for c := 1; c < l.channels; c++ {
				m = max(m, x[base+c*l.inner])
			}
			var sum T
			for c := range l.channels {
				e := T(math.Exp(float64(x[base+c*l.inner] - m)))
				y[base+c*l.inner] = e
				sum += e
			}
			for c := range l.channels {
				y[base+c*l.inner] /= sum
			}
		}
	}
	return nil
}

// BackwardCPU computes dx = (dy - dot(dy, y)) * y along the channels.
func (l *softmaxLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	y, dy, dx := top[0].CPUData(), top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	dim := l.channels * l.inner
	for i := range l.outer {
		for k := range l.inner {
			base := i*dim + k
			var d T
			for c := range l.channels {
				d += dy[base+c*l.inner] * y[base+c*l.inner]
			}
			for c := range l.channels {
				j := base + c*l.inner
				dx[j] = (dy[j] - d) * y[j]
			}
		}
	}
	return nil
}
