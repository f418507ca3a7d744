package neuron

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Dropout",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newDropout[float32], New64: newDropout[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newDropoutGPU[float32], newDropoutGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Dropout, in the TRAIN phase, zeroes each element with probability
// dropout_ratio (default 0.5) and scales the others by 1 / (1 - ratio), so
// that the expected output is the input; in the TEST phase it passes the
// input through. A new mask is drawn from the layer's random number
// generator at every TRAIN forward pass, and the backward pass applies the
// same mask. It works in place.
type dropoutLayer[T layer.Float] struct {
	neuron[T]
	ratio float64
	scale T
	// mask holds, per element, scale where the element is kept and 0 where
	// it is dropped (TRAIN only), on the layer's device.
	mask *blob.Blob[T]
}

func newDropout[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &dropoutLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.ratio = float64(p.GetDropoutParam().GetDropoutRatio())
	if !(l.ratio >= 0 && l.ratio < 1) {
		return nil, fmt.Errorf("dropout_param.dropout_ratio must be in [0, 1), got %v", l.ratio)
	}
	l.scale = T(1 / (1 - l.ratio))
	return l, nil
}

// Type returns "Dropout".
func (*dropoutLayer[T]) Type() string { return "Dropout" }

// train reports whether the layer drops elements: in the TRAIN phase.
func (l *dropoutLayer[T]) train() bool { return l.Phase() == caffepb.Phase_TRAIN }

// LayerSetUp creates the mask, which only the TRAIN phase needs.
func (l *dropoutLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if !l.train() {
		return nil
	}
	mask, err := l.NewBlob()
	if err != nil {
		return err
	}
	l.mask = mask
	return nil
}

// Reshape gives the top and the mask the bottom's shape.
func (l *dropoutLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if l.mask == nil {
		return nil
	}
	return l.mask.ReshapeLike(bottom[0])
}

// ForwardCPU draws the mask, keeping each element with probability 1 -
// ratio, and applies it (TRAIN), or copies the input (TEST).
func (l *dropoutLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if !l.train() {
		return dropoutPass(device.HostView[T]{}, bottom[0], top[0], false)
	}
	rng, keep := l.RNG(), 1-l.ratio
	x, y, mask := bottom[0].CPUData(), top[0].MutableCPUData(), l.mask.MutableCPUData()
	for i, v := range x {
		// scale or 0 by a number, not a branch (mispredicted about every
		// other element at ratio 0.5); scale is finite (ratio < 1).
		mask[i] = l.scale * T(kit.Btoi(rng.Float64() < keep))
		y[i] = v * mask[i]
	}
	return nil
}

// BackwardCPU applies the forward pass's mask to the gradient (TRAIN), or
// passes it through (TEST).
func (l *dropoutLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	return dropoutBackward(l, device.HostView[T]{}, top[0], bottom[0])
}

// dropoutPass copies the data (or, with diff, the top's diff to the
// bottom's) unchanged, unless the layer runs in place.
func dropoutPass[T layer.Float, A any](d device.View[T, A], bottom, top *blob.Blob[T], diff bool) error {
	if bottom == top {
		return nil
	}
	if diff {
		d.Copy(top.Count(), d.Diff(top), d.MutableDiff(bottom))
	} else {
		d.Copy(bottom.Count(), d.Data(bottom), d.MutableData(top))
	}
	return d.Err()
}

// dropoutBackward computes dx = dy * mask in TRAIN and dx = dy in TEST.
func dropoutBackward[T layer.Float, A any](l *dropoutLayer[T], d device.View[T, A], top, bottom *blob.Blob[T]) error {
	if !l.train() {
		return dropoutPass(d, bottom, top, true)
	}
	d.Mul(bottom.Count(), d.Diff(top), d.Data(l.mask), d.MutableDiff(bottom))
	return d.Err()
}
