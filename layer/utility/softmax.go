package utility

import (
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
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

	// The forward pass in progress, read by its parts; the part body made
	// once, so that a pass allocates nothing.
	x, y        []T
	forwardPart func(part, lo, hi int)
}

// softmaxParallel is the least number of elements whose forward pass
// is spread over the cores: MobileNet-SSD's 1917 x 21 confidences took
// 1.4 ms on one core of a 2-vCPU AMD EPYC, more than twice OpenCV's
// time; a classifier's 1000 stay on one (waking the others costs more).
const softmaxParallel = 1 << 13

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
	l.x, l.y = bottom[0].CPUData(), top[0].MutableCPUData()
	if l.forwardPart == nil {
		l.forwardPart = l.forwardPositions
	}
	positions := l.outer * l.inner
	if positions*l.channels >= softmaxParallel {
		mathfn.Parallel(positions, l.forwardPart)
	} else {
		l.forwardPositions(0, 0, positions)
	}
	l.x, l.y = nil, nil
	return nil
}

// forwardPositions computes the softmax of positions [lo, hi) of the
// outer x inner ones (position p is outer index p / inner, inner index
// p % inner), each as the whole pass would: the parts' results are the
// serial pass's bit for bit.
func (l *softmaxLayer[T]) forwardPositions(_, lo, hi int) {
	x, y := l.x, l.y
	dim := l.channels * l.inner
	for p := lo; p < hi; p++ {
		base := p/l.inner*dim + p%l.inner
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
