package loss

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "MultinomialLogisticLoss",
		New32: newMultinomialLogisticLoss[float32], New64: newMultinomialLogisticLoss[float64],
		ONNX: layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// logThreshold is Caffe's kLOG_THRESHOLD, the floor on probabilities fed
// to log.
const logThreshold = 1e-20

// MultinomialLogisticLoss is -sum log(max(p[label], 1e-20)) / N for N x K
// probabilities (not scores: put a Softmax below it) and N labels (Caffe's
// MultinomialLogisticLossLayer).
type multinomialLogisticLossLayer[T layer.Float] struct{ layer.LossBase[T] }

func newMultinomialLogisticLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &multinomialLogisticLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "MultinomialLogisticLoss".
func (*multinomialLogisticLossLayer[T]) Type() string { return "MultinomialLogisticLoss" }

// LayerSetUp has nothing to do.
func (*multinomialLogisticLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks one label per item.
func (l *multinomialLogisticLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0].NumAxes() == 0 || bottom[1].Count() != bottom[0].Shape()[0] {
		return fmt.Errorf("one label per item: labels %s for probabilities %s", bottom[1].ShapeString(), bottom[0].ShapeString())
	}
	return top[0].Reshape(kit.ScalarShape())
}

// ForwardCPU computes the loss.
func (l *multinomialLogisticLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	p, labels := bottom[0].CPUData(), bottom[1].CPUData()
	num := bottom[0].Shape()[0]
	dim := bottom[0].Count() / num
	var loss float64
	for i := range num {
		if err := checkLabel(labels[i], i, dim, false, 0); err != nil {
			return err
		}
		loss -= math.Log(max(float64(p[i*dim+int(labels[i])]), logThreshold))
	}
	top[0].MutableCPUData()[0] = T(loss / float64(num))
	return nil
}

// BackwardCPU: -loss weight / (N * max(p, 1e-20)) at the label, 0
// elsewhere.
func (l *multinomialLogisticLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return errors.New("MultinomialLogisticLoss layer cannot backpropagate to label inputs")
	}
	if !propagateDown[0] {
		return nil
	}
	p, labels, dx := bottom[0].CPUData(), bottom[1].CPUData(), bottom[0].MutableCPUDiff()
	num := bottom[0].Shape()[0]
	dim := bottom[0].Count() / num
	scale := -float64(top[0].CPUDiff()[0]) / float64(num)
	clear(dx)
	for i := range num {
		j := i*dim + int(labels[i])
		dx[j] = T(scale / max(float64(p[j]), logThreshold))
	}
	return nil
}
