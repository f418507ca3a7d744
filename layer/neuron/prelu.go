package neuron

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "PReLU",
		New32: newPReLU[float32], New64: newPReLU[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newPReLUGPU[float32], newPReLUGPU[float64])},
		InPlace:   true,
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// PReLU is the parametric ReLU: y = max(x, 0) + a_c * min(x, 0), where a_c
// is a learnable slope for channel c (axis 1), or one slope for every
// channel when prelu_param.channel_shared is set. It works in place,
// keeping a copy of the input for the backward pass as Caffe does.
type preluLayer[T layer.Float] struct {
	neuron[T]
	shared bool
	// The bottom is num x channels x dim, dim the count from axis 2.
	num, channels, dim int
	input              bottomCopy[T]
}

func newPReLU[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &preluLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.shared = p.GetPreluParam().GetChannelShared()
	return l, nil
}

// Type returns "PReLU".
func (*preluLayer[T]) Type() string { return "PReLU" }

// checkPReLUAxes rejects bottoms without a channel axis.
func checkPReLUAxes[T layer.Float](b *blob.Blob[T]) error {
	if b.NumAxes() < 2 {
		return fmt.Errorf("bottom must have at least 2 axes (num, channels, ...), got shape %s", b.ShapeString())
	}
	return nil
}

// LayerSetUp creates the slopes (filled by prelu_param.filler, default
// constant 0.25) unless they came with the model, in which case their count
// is checked. A shared slope is a blob of no axes (count 1), as in Caffe, so
// that models move between the two unchanged.
func (l *preluLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := checkPReLUAxes(bottom[0]); err != nil {
		return err
	}
	want := bottom[0].Shape()[1]
	if l.shared {
		want = 1
	}
	if len(l.Blobs()) > 0 {
		if len(l.Blobs()) != 1 {
			return fmt.Errorf("incorrect number of weight blobs: %d, want 1 (slopes)", len(l.Blobs()))
		}
		if n := l.Blobs()[0].Count(); n != want {
			return fmt.Errorf("negative slope size is inconsistent with prototxt config: %d slopes, want %d (channel_shared %v)", n, want, l.shared)
		}
		return nil
	}
	fp := l.Param().GetPreluParam().GetFiller()
	if fp == nil {
		fp = &caffepb.FillerParameter{Type: proto.String("constant"), Value: proto.Float32(0.25)}
	}
	// Fill as a vector (fillers need an axis), then drop the axis of a
	// shared slope; the count, and so the values, stay.
	slopes, err := l.NewParamBlob(fp, want)
	if err != nil {
		return fmt.Errorf("slope filler: %w", err)
	}
	if l.shared {
		if err := slopes.Reshape([]int{}); err != nil {
			return err
		}
	}
	l.AddBlob(slopes)
	return nil
}

// Reshape gives the top the bottom's shape, checks that the bottom still
// has the channels the slopes are for, and sizes the in-place copy.
func (l *preluLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if err := checkPReLUAxes(b); err != nil {
		return err
	}
	if !l.shared && b.Shape()[1] != l.Blobs()[0].Count() {
		return fmt.Errorf("bottom has %d channels (shape %s), the slopes are for %d", b.Shape()[1], b.ShapeString(), l.Blobs()[0].Count())
	}
	l.num, l.channels, l.dim = b.Shape()[0], b.Shape()[1], b.CountFrom(2)
	if err := top[0].ReshapeLike(b); err != nil {
		return err
	}
	return l.input.reshape(&l.Base, b, top[0])
}

// slopeDiv divides an element's channel to give its slope's index (Caffe's
// div_factor): 1 per channel, channels when shared, which maps every
// channel to slope 0.
func (l *preluLayer[T]) slopeDiv() int {
	if l.shared {
		return max(l.channels, 1)
	}
	return 1
}

// ForwardCPU applies each channel's slope to the negative inputs.
func (l *preluLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if err := saveBottom(&l.input, device.HostView[T]{}, bottom[0], top[0]); err != nil {
		return err
	}
	x, y, a := bottom[0].CPUData(), top[0].MutableCPUData(), l.Blobs()[0].CPUData()
	div := l.slopeDiv()
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = a[i/l.dim%l.channels/div] * v
		}
	}
	return nil
}

// BackwardCPU accumulates the slopes' gradient, the sum of dy * x over each
// slope's negative inputs, then computes the bottom's. The slopes come
// first: in place, the bottom's diff overwrites the top's.
func (l *preluLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	x := l.input.input(bottom[0], top[0]).CPUData()
	dy := top[0].CPUDiff()
	div := l.slopeDiv()
	if l.ParamPropagateDown(0) {
		da := l.Blobs()[0].MutableCPUDiff()
		for n := range l.num {
			for c := range l.channels {
				start := (n*l.channels + c) * l.dim
				var sum float64 // a wide sum: a shared slope adds up every element
				for i := start; i < start+l.dim; i++ {
					if x[i] <= 0 {
						sum += float64(dy[i] * x[i])
					}
				}
				da[c/div] += T(sum)
			}
		}
	}
	if propagateDown[0] {
		a, dx := l.Blobs()[0].CPUData(), bottom[0].MutableCPUDiff()
		for i, v := range x {
			if v > 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = a[i/l.dim%l.channels/div] * dy[i]
			}
		}
	}
	return nil
}
