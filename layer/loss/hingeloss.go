package loss

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "HingeLoss",
		New32: newHingeLoss[float32], New64: newHingeLoss[float64],
		ONNX: layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// HingeLoss is the one-versus-all hinge loss of N x K scores and N labels
// (Caffe's HingeLossLayer): with t = -x at the label and x elsewhere,
// loss = sum(max(0, 1 + t)) / N (L1, the default) or
// sum(max(0, 1 + t)^2) / N (L2).
type hingeLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	l2     bool
	margin []T // max(0, 1 + t)
}

func newHingeLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &hingeLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	switch p.GetHingeLossParam().GetNorm() {
	case caffepb.HingeLossParameter_L1:
	case caffepb.HingeLossParameter_L2:
		l.l2 = true
	default:
		return nil, fmt.Errorf("unknown hinge_loss_param.norm %v", p.GetHingeLossParam().GetNorm())
	}
	return l, nil
}

// Type returns "HingeLoss".
func (*hingeLossLayer[T]) Type() string { return "HingeLoss" }

// LayerSetUp has nothing to do.
func (*hingeLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks one label per item.
func (l *hingeLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0].NumAxes() == 0 || bottom[1].NumAxes() == 0 || bottom[0].Shape()[0] != bottom[1].Shape()[0] {
		return fmt.Errorf("the data and label should have the same first dimension: %s vs. %s", bottom[0].ShapeString(), bottom[1].ShapeString())
	}
	if bottom[1].Count() != bottom[0].Shape()[0] {
		return fmt.Errorf("one label per item: %d labels for %d items", bottom[1].Count(), bottom[0].Shape()[0])
	}
	if cap(l.margin) < bottom[0].Count() {
		l.margin = make([]T, bottom[0].Count())
	}
	l.margin = l.margin[:bottom[0].Count()]
	return top[0].Reshape(kit.ScalarShape())
}

// ForwardCPU computes the loss.
func (l *hingeLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, labels := bottom[0].CPUData(), bottom[1].CPUData()
	num := bottom[0].Shape()[0]
	dim := bottom[0].Count() / num
	var loss T
	for i := range num {
		if err := checkLabel(labels[i], i, dim, false, 0); err != nil {
			return err
		}
		label := int(labels[i])
		for j := range dim {
			t := x[i*dim+j]
			if j == label {
				t = -t
			}
			m := max(0, 1+t)
			l.margin[i*dim+j] = m
			if l.l2 {
				loss += m * m
			} else {
				loss += m
			}
		}
	}
	top[0].MutableCPUData()[0] = loss / T(num)
	return nil
}

// BackwardCPU: L1 gives ±1 where the margin is positive, L2 ±2·margin, the
// sign negative at the label; times loss weight / N.
func (l *hingeLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return errors.New("HingeLoss layer cannot backpropagate to label inputs")
	}
	if !propagateDown[0] {
		return nil
	}
	labels, dx := bottom[1].CPUData(), bottom[0].MutableCPUDiff()
	num := bottom[0].Shape()[0]
	dim := bottom[0].Count() / num
	scale := top[0].CPUDiff()[0] / T(num)
	for i := range num {
		for j := range dim {
			m := l.margin[i*dim+j]
			g := T(0)
			switch {
			case l.l2:
				g = 2 * m
			case m > 0:
				g = 1
			}
			if j == int(labels[i]) {
				g = -g
			}
			dx[i*dim+j] = g * scale
		}
	}
	return nil
}
