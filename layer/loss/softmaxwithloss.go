package loss

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "SoftmaxWithLoss",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newSoftmaxWithLoss[float32], New64: newSoftmaxWithLoss[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newSoftmaxWithLossGPU[float32], newSoftmaxWithLossGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// SoftmaxWithLoss is the multinomial logistic loss of a softmax: bottom 0
// holds scores with the classes along softmax_param.axis (default 1),
// bottom 1 the labels, one per outer x inner position. The loss is
// -sum log(max(p[label], FLT_MIN)) over positions whose label is not
// loss_param.ignore_label, divided by the normalizer (VALID by default, or
// FULL, BATCH_SIZE, NONE, or the legacy normalize flag). An optional second
// top receives the probabilities.
type softmaxWithLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	innerSoftmax[T]
	hasIgnore        bool
	ignore           int
	mode             caffepb.LossParameter_NormalizationMode
	lossData, counts *blob.Blob[T] // per-position scratch for the GPU
	lossNorm         *blob.Blob[T] // the GPU forward's normalizer, for its backward
	labels           *blob.Blob[T] // the GPU forward's labels, to explain a NaN loss
}

func newSoftmaxWithLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &softmaxWithLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	lp := p.GetLossParam()
	l.hasIgnore, l.ignore = lp != nil && lp.IgnoreLabel != nil, int(lp.GetIgnoreLabel())
	l.mode = normalization(lp, caffepb.LossParameter_VALID)
	if err := l.makeSoftmax(p, p.GetSoftmaxParam()); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "SoftmaxWithLoss".
func (*softmaxWithLossLayer[T]) Type() string { return "SoftmaxWithLoss" }

// Counts returns scores and labels in, the loss (and optionally the
// probabilities) out; the loss top is added when the layer lists none.
func (*softmaxWithLossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Between(1, 2), AutoTop: true}
}

// LayerSetUp sets up the inner softmax on the layer's device.
func (l *softmaxWithLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	return l.setUpSoftmax(&l.Base, bottom[0])
}

// Reshape checks that there is one label per position.
func (l *softmaxWithLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshapeSoftmax(bottom[0], int(l.Param().GetSoftmaxParam().GetAxis())); err != nil {
		return err
	}
	if bottom[1].Count() != l.outer*l.inner {
		return fmt.Errorf("number of labels must match number of predictions: %d labels (%s) for %d positions of %s (softmax axis %d)",
			bottom[1].Count(), bottom[1].ShapeString(), l.outer*l.inner, bottom[0].ShapeString(), l.Param().GetSoftmaxParam().GetAxis())
	}
	if err := top[0].Reshape(kit.ScalarShape()); err != nil {
		return err
	}
	if len(top) == 2 {
		return top[1].ReshapeLike(bottom[0])
	}
	return nil
}

// ForwardCPU computes the probabilities and the loss on the host.
func (l *softmaxWithLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if _, err := layer.Forward[T](l.softmax, bottom[:1], l.probTop); err != nil {
		return err
	}
	prob, labels := l.prob.CPUData(), bottom[1].CPUData()
	dim := l.channels * l.inner
	var loss float64
	valid := 0
	for i := range l.outer {
		for j := range l.inner {
			v := labels[i*l.inner+j]
			if err := checkLabel(v, i*l.inner+j, l.channels, l.hasIgnore, l.ignore); err != nil {
				return err
			}
			if l.hasIgnore && int(v) == l.ignore {
				continue
			}
			loss -= math.Log(max(float64(prob[i*dim+int(v)*l.inner+j]), kit.FltMin))
			valid++
		}
	}
	top[0].MutableCPUData()[0] = T(loss / normalizer(l.mode, l.outer, l.inner, valid))
	if len(top) == 2 {
		return top[1].ShareData(l.prob)
	}
	return nil
}

// BackwardCPU computes (p - onehot(label)) * loss weight / normalizer, zero
// at ignored positions. The labels get no gradient.
func (l *softmaxWithLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return fmt.Errorf("%s layer cannot backpropagate to label inputs", l.Type())
	}
	if !propagateDown[0] {
		return nil
	}
	dx, labels := bottom[0].MutableCPUDiff(), bottom[1].CPUData()
	copy(dx, l.prob.CPUData())
	dim := l.channels * l.inner
	valid := 0
	for i := range l.outer {
		for j := range l.inner {
			v := int(labels[i*l.inner+j])
			if l.hasIgnore && v == l.ignore {
				for c := range l.channels {
					dx[i*dim+c*l.inner+j] = 0
				}
				continue
			}
			dx[i*dim+v*l.inner+j]--
			valid++
		}
	}
	scale := T(float64(top[0].CPUDiff()[0]) / normalizer(l.mode, l.outer, l.inner, valid))
	for i := range dx {
		dx[i] *= scale
	}
	return nil
}
