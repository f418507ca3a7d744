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
	// fast says the forward pass takes expFast: float32, in an inference
	// plan (SetInferenceOnly).
	fast bool
}

// SetInferenceOnly lets a float32 forward pass take expFast, within a
// few ulp of math.Exp (layer.InferenceOnly): math.Exp's float64 took
// three quarters of the pass, 0.7 ms on MobileNet-SSD's 2278 x 21
// confidences at batch 1, where the convolutions before it are a few ms.
// Training keeps math.Exp.
func (l *softmaxLayer[T]) SetInferenceOnly(on bool) {
	var zero T
	_, f32 := any(zero).(float32)
	l.fast = on && f32
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
			var e T
			if l.fast {
				e = T(expFast(float32(x[base+c*l.inner] - m)))
			} else {
				e = T(math.Exp(float64(x[base+c*l.inner] - m)))
			}
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

// expFast is e^x in float32 for x in [-87, 88] (else math.Exp's): x =
// n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, Cody and Waite), e^r
// by Cephes' expf polynomial, 2^n into the exponent; within 2 ulp of the
// correctly rounded e^x (TestExpFast).
func expFast(x float32) float32 {
	if !(x >= -87 && x <= 88) { // NaN too
		return float32(math.Exp(float64(x)))
	}
	n := float32(math.Floor(float64(x*math.Log2E + 0.5)))
	r := x - n*0.693359375
	r -= n * -2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
