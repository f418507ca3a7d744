package loss

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
		Type:  "EuclideanLoss",
		New32: newEuclideanLoss[float32], New64: newEuclideanLoss[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newEuclideanLossGPU[float32], newEuclideanLossGPU[float64])},
		ONNX:    layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// EuclideanLoss is sum((a - b)^2) / (2N) over two bottoms of the same
// shape past the first axis, N = shape(0). Unlike most losses, both
// bottoms may get a gradient (they are both predictions, say).
type euclideanLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	diff *blob.Blob[T] // a - b
}

func newEuclideanLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &euclideanLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "EuclideanLoss".
func (*euclideanLossLayer[T]) Type() string { return "EuclideanLoss" }

// AllowForceBackward allows both bottoms: neither is a label.
func (*euclideanLossLayer[T]) AllowForceBackward(int) bool { return true }

// LayerSetUp creates the difference buffer.
func (l *euclideanLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	var err error
	l.diff, err = l.NewBlob()
	return err
}

// checkPairedLossInputs checks what Caffe's LossLayer checks, that the two bottoms
// have the same first dimension, and that they hold as many elements.
func checkPairedLossInputs[T layer.Float](bottom []*blob.Blob[T]) error {
	a, b := bottom[0], bottom[1]
	if a.NumAxes() == 0 || b.NumAxes() == 0 {
		return fmt.Errorf("bottoms %s and %s need a first (batch) axis", a.ShapeString(), b.ShapeString())
	}
	if a.Shape()[0] != b.Shape()[0] {
		return fmt.Errorf("the data and label should have the same first dimension: %s vs. %s", a.ShapeString(), b.ShapeString())
	}
	if a.Count() != b.Count() {
		return fmt.Errorf("inputs must have the same count: %s (%d) vs. %s (%d)", a.ShapeString(), a.Count(), b.ShapeString(), b.Count())
	}
	return nil
}

// Reshape checks the bottoms and sizes the loss and the buffer.
func (l *euclideanLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := checkPairedLossInputs(bottom); err != nil {
		return err
	}
	if err := top[0].Reshape(kit.ScalarShape()); err != nil {
		return err
	}
	return l.diff.ReshapeLike(bottom[0])
}

// ForwardCPU computes the loss on the host.
func (l *euclideanLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return euclideanForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU computes the gradients on the host.
func (l *euclideanLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return euclideanBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

func euclideanForward[T layer.Float, A any](l *euclideanLossLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	n := bottom[0].Count()
	diff := d.MutableData(l.diff)
	d.Sub(n, d.Data(bottom[0]), d.Data(bottom[1]), diff)
	dot := d.Dot(n, diff, diff)
	if err := d.Err(); err != nil {
		return err
	}
	top[0].MutableCPUData()[0] = dot / T(bottom[0].Shape()[0]) / 2
	return nil
}

// euclideanBackward computes d loss / d a = (a - b) * w / N and
// d loss / d b = -(a - b) * w / N, w the loss weight.
func euclideanBackward[T layer.Float, A any](l *euclideanLossLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	w := top[0].CPUDiff()[0]
	for i, sign := range []T{1, -1} {
		if propagateDown[i] {
			alpha := sign * w / T(bottom[i].Shape()[0])
			d.Scale(bottom[i].Count(), alpha, d.Data(l.diff), d.MutableDiff(bottom[i]))
		}
	}
	return d.Err()
}
