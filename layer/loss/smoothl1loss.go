package loss

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "SmoothL1Loss",
		New32: newSmoothL1Loss[float32], New64: newSmoothL1Loss[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newSmoothL1LossGPU[float32], newSmoothL1LossGPU[float64])},
		ONNX:    layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
		NoGolden: "BVLC Caffe has no such layer: it is Faster R-CNN's (rbgirshick/caffe-fast-rcnn)",
	})
}

// SmoothL1Loss is Faster R-CNN's box regression loss
// (rbgirshick/caffe-fast-rcnn; smooth_l1_loss_param): with
// d = w_in * (a - b), the loss is sum(w_out * f(d)) / N, N = shape(0), where
// f(d) = 0.5 * (sigma * d)^2 for |d| < 1/sigma^2 and |d| - 0.5/sigma^2
// beyond. The optional third and fourth bottoms are the inside and outside
// weights w_in and w_out (both or neither). Both a and b get gradients.
type smoothL1LossLayer[T layer.Float] struct {
	layer.LossBase[T]
	sigma2 T
	diff   []T // w_in * (a - b)
}

func newSmoothL1Loss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &smoothL1LossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	s := p.GetSmoothL1LossParam().GetSigma()
	l.sigma2 = T(s) * T(s)
	return l, nil
}

// Type returns "SmoothL1Loss".
func (*smoothL1LossLayer[T]) Type() string { return "SmoothL1Loss" }

// Counts: prediction and target, and optionally the two weights.
func (*smoothL1LossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Between(2, 4), Top: layer.Exactly(1), AutoTop: true}
}

// AllowForceBackward allows the prediction and the target; not the weights.
func (*smoothL1LossLayer[T]) AllowForceBackward(i int) bool { return i < 2 }

// LayerSetUp checks that the weights come in a pair.
func (l *smoothL1LossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if len(bottom) == 3 {
		return fmt.Errorf("with weights, both the inside and the outside weights must be given (4 bottoms), got 3")
	}
	return nil
}

// Reshape checks that every bottom has the prediction's shape.
func (l *smoothL1LossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := checkPairedLossInputs(bottom); err != nil {
		return err
	}
	for i, b := range bottom[1:] {
		if !b.SameShape(bottom[0]) {
			return fmt.Errorf("bottom %d %s differs in shape from the prediction %s", i+1, b.ShapeString(), bottom[0].ShapeString())
		}
	}
	l.diff = kit.Grow(l.diff, bottom[0].Count())
	return top[0].Reshape(kit.ScalarShape())
}

// ForwardCPU computes the loss.
func (l *smoothL1LossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a, b := bottom[0].CPUData(), bottom[1].CPUData()
	var in, out []T
	if len(bottom) == 4 {
		in, out = bottom[2].CPUData(), bottom[3].CPUData()
	}
	var loss T
	for i := range a {
		d := a[i] - b[i]
		if in != nil {
			d *= in[i]
		}
		l.diff[i] = d
		e := d
		if e < 0 {
			e = -e
		}
		if e < 1/l.sigma2 {
			e = 0.5 * d * d * l.sigma2
		} else {
			e -= 0.5 / l.sigma2
		}
		if out != nil {
			e *= out[i]
		}
		loss += e
	}
	top[0].MutableCPUData()[0] = loss / T(bottom[0].Shape()[0])
	return nil
}

// BackwardCPU: d loss / d a = w f'(d) w_in w_out / N (w the loss weight),
// with f'(d) = sigma^2 d inside the quadratic zone and sign(d) beyond; the
// target's is its negative.
func (l *smoothL1LossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	w := top[0].CPUDiff()[0]
	for k, sign := range []T{1, -1} {
		if !propagateDown[k] {
			continue
		}
		alpha := sign * w / T(bottom[k].Shape()[0])
		dx := bottom[k].MutableCPUDiff()
		for i, d := range l.diff {
			var g T
			switch {
			case d < 1/l.sigma2 && d > -1/l.sigma2:
				g = l.sigma2 * d
			case d > 0:
				g = 1
			case d < 0:
				g = -1
			}
			g *= alpha
			if len(bottom) == 4 {
				g *= bottom[2].CPUData()[i] * bottom[3].CPUData()[i]
			}
			dx[i] = g
		}
	}
	return nil
}
