package loss

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "InfogainLoss",
		New32: newInfogainLoss[float32], New64: newInfogainLoss[float64],
		ONNX: layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// InfogainLoss is the softmax loss weighted by an information gain matrix
// H (K x K) (Caffe's InfogainLossLayer): with p the softmax of the scores
// along infogain_loss_param.axis (default 1),
// loss = -sum over positions of sum_k H[label, k] log(max(p_k, 1e-20)),
// divided by the normalizer of loss_param (VALID by default). H comes from
// infogain_loss_param.source (a BlobProto file) or a third bottom. An
// optional second top receives the probabilities.
type infogainLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	innerSoftmax[T]
	h         *blob.Blob[T] // H from source
	hasIgnore bool
	ignore    int
	mode      caffepb.LossParameter_NormalizationMode
}

func newInfogainLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &infogainLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	lp := p.GetLossParam()
	if lp != nil && lp.Normalize != nil {
		return nil, errors.New(`loss_param.normalize is deprecated; use "normalization"`)
	}
	l.hasIgnore, l.ignore = lp != nil && lp.IgnoreLabel != nil, int(lp.GetIgnoreLabel())
	l.mode = normalization(lp, caffepb.LossParameter_VALID)
	if err := l.makeSoftmax(p, &caffepb.SoftmaxParameter{Axis: proto.Int32(p.GetInfogainLossParam().GetAxis())}); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "InfogainLoss".
func (*infogainLossLayer[T]) Type() string { return "InfogainLoss" }

// Counts returns scores, labels and optionally H in; the loss and
// optionally the probabilities out.
func (*infogainLossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Between(2, 3), Top: layer.Between(1, 2), AutoTop: true}
}

// AllowForceBackward refuses the labels and H.
func (*infogainLossLayer[T]) AllowForceBackward(i int) bool { return i == 0 }

// LayerSetUp sets up the softmax and reads H from source when there is no
// third bottom.
func (l *infogainLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.setUpSoftmax(&l.Base, bottom[0]); err != nil {
		return err
	}
	if len(bottom) == 3 {
		return nil
	}
	source := l.Param().GetInfogainLossParam().GetSource()
	if source == "" {
		return errors.New("infogain matrix source must be specified (infogain_loss_param.source), or given as a third bottom")
	}
	var bp caffepb.BlobProto
	if err := protoio.ReadProtoFromBinaryFile(source, &bp); err != nil {
		return err
	}
	var err error
	if l.h, err = blob.New[T](); err != nil {
		return err
	}
	if err := l.h.FromProto(&bp, true); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// matrix returns H.
func (l *infogainLossLayer[T]) matrix(bottom []*blob.Blob[T]) *blob.Blob[T] {
	if len(bottom) == 3 {
		return bottom[2]
	}
	return l.h
}

// Reshape checks the labels and H against the scores.
func (l *infogainLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshapeSoftmax(bottom[0], int(l.Param().GetInfogainLossParam().GetAxis())); err != nil {
		return err
	}
	if bottom[1].Count() != l.outer*l.inner {
		return fmt.Errorf("number of labels must match number of predictions: %d labels (%s) for %d positions of %s (infogain axis %d)",
			bottom[1].Count(), bottom[1].ShapeString(), l.outer*l.inner, bottom[0].ShapeString(), l.Param().GetInfogainLossParam().GetAxis())
	}
	if h := l.matrix(bottom); h.Count() != l.channels*l.channels {
		return fmt.Errorf("H must be %dx%d, got %s", l.channels, l.channels, h.ShapeString())
	}
	if err := top[0].Reshape(kit.ScalarShape()); err != nil {
		return err
	}
	if len(top) == 2 {
		return top[1].ReshapeLike(bottom[0])
	}
	return nil
}

// ForwardCPU computes the probabilities and the loss.
func (l *infogainLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if _, err := layer.Forward[T](l.softmax, bottom[:1], l.probTop); err != nil {
		return err
	}
	prob, labels, h := l.prob.CPUData(), bottom[1].CPUData(), l.matrix(bottom).CPUData()
	k := l.channels
	var loss float64
	valid := 0
	for i := range l.outer {
		for j := range l.inner {
			v := labels[i*l.inner+j]
			if err := checkLabel(v, i*l.inner+j, k, l.hasIgnore, l.ignore); err != nil {
				return err
			}
			if l.hasIgnore && int(v) == l.ignore {
				continue
			}
			for c := range k {
				loss -= float64(h[int(v)*k+c]) * math.Log(max(float64(prob[(i*k+c)*l.inner+j]), logThreshold))
			}
			valid++
		}
	}
	top[0].MutableCPUData()[0] = T(loss / normalizer(l.mode, l.outer, l.inner, valid))
	if len(top) == 2 {
		return top[1].ShareData(l.prob)
	}
	return nil
}

// BackwardCPU: p_k * sum_c H[label, c] - H[label, k], times loss weight /
// normalizer; zero at ignored positions.
func (l *infogainLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return errors.New("InfogainLoss layer cannot backpropagate to label inputs")
	}
	if len(propagateDown) > 2 && propagateDown[2] {
		return errors.New("InfogainLoss layer cannot backpropagate to infogain inputs")
	}
	if !propagateDown[0] {
		return nil
	}
	prob, labels, h := l.prob.CPUData(), bottom[1].CPUData(), l.matrix(bottom).CPUData()
	dx := bottom[0].MutableCPUDiff()
	k := l.channels
	valid := 0
	for i := range l.outer {
		for j := range l.inner {
			v := int(labels[i*l.inner+j])
			ignored := l.hasIgnore && v == l.ignore
			var rowSum T
			if !ignored {
				for c := range k {
					rowSum += h[v*k+c]
				}
				valid++
			}
			for c := range k {
				at := (i*k+c)*l.inner + j
				if ignored {
					dx[at] = 0
				} else {
					dx[at] = prob[at]*rowSum - h[v*k+c]
				}
			}
		}
	}
	scale := T(float64(top[0].CPUDiff()[0]) / normalizer(l.mode, l.outer, l.inner, valid))
	for i := range dx {
		dx[i] *= scale
	}
	return nil
}
