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
		Type:  "SigmoidCrossEntropyLoss",
		New32: newSigmoidCrossEntropyLoss[float32], New64: newSigmoidCrossEntropyLoss[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newSigmoidCrossEntropyLossGPU[float32], newSigmoidCrossEntropyLossGPU[float64])},
		ONNX:    layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// SigmoidCrossEntropyLoss is the cross-entropy of targets t in [0, 1]
// (bottom 1) and the sigmoid of scores x (bottom 0, as many elements):
// -sum[t*x - log(1 + exp(x))], computed without overflow, over the
// positions whose target is not loss_param.ignore_label, divided by the
// normalizer (BATCH_SIZE, shape(0), unless loss_param says otherwise). The
// targets get no gradient.
type sigmoidCrossEntropyLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	hasIgnore    bool
	ignore       int
	mode         caffepb.LossParameter_NormalizationMode
	outer, inner int
	// normalizer is the forward pass's, which backward divides by.
	normalizer float64
	// Per-element scratch for the GPU: the loss and whether it counts.
	lossData, counts *blob.Blob[T]
}

func newSigmoidCrossEntropyLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &sigmoidCrossEntropyLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	lp := p.GetLossParam()
	l.hasIgnore, l.ignore = lp != nil && lp.IgnoreLabel != nil, int(lp.GetIgnoreLabel())
	l.mode = normalization(lp, caffepb.LossParameter_BATCH_SIZE)
	return l, nil
}

// Type returns "SigmoidCrossEntropyLoss".
func (*sigmoidCrossEntropyLossLayer[T]) Type() string { return "SigmoidCrossEntropyLoss" }

// LayerSetUp creates the scratch blobs (sized only when the GPU uses them).
func (l *sigmoidCrossEntropyLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	var err error
	if l.lossData, err = l.NewBlob(); err != nil {
		return err
	}
	l.counts, err = l.NewBlob()
	return err
}

// Reshape checks that there is one target per score.
func (l *sigmoidCrossEntropyLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := checkPairedLossInputs(bottom); err != nil {
		return fmt.Errorf("SIGMOID_CROSS_ENTROPY_LOSS layer inputs: %w", err)
	}
	l.outer, l.inner = bottom[0].Shape()[0], bottom[0].CountFrom(1)
	for _, b := range []*blob.Blob[T]{l.lossData, l.counts} {
		if err := b.ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	return top[0].Reshape(kit.ScalarShape())
}

// ignored reports whether target t is the ignored label (compared as an
// integer, as Caffe casts it).
func (l *sigmoidCrossEntropyLossLayer[T]) ignored(t T) bool {
	return l.hasIgnore && int(t) == l.ignore
}

// sigmoidCrossEntropy is -(t*x - log(1 + exp(x))), written so that exp
// never overflows: for x >= 0 it is x*(1-t) + log(1 + exp(-x)).
func sigmoidCrossEntropy(x, t float64) float64 {
	if x >= 0 {
		return x*(1-t) + math.Log1p(math.Exp(-x))
	}
	return -x*t + math.Log1p(math.Exp(x))
}

// ForwardCPU computes the loss on the host.
func (l *sigmoidCrossEntropyLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, t := bottom[0].CPUData(), bottom[1].CPUData()
	var loss float64
	valid := 0
	for i, xi := range x {
		if l.ignored(t[i]) {
			continue
		}
		loss += sigmoidCrossEntropy(float64(xi), float64(t[i]))
		valid++
	}
	l.normalizer = normalizer(l.mode, l.outer, l.inner, valid)
	top[0].MutableCPUData()[0] = T(loss / l.normalizer)
	return nil
}

// BackwardCPU computes (sigmoid(x) - t) * loss weight / normalizer, zero at
// ignored positions.
func (l *sigmoidCrossEntropyLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[1] {
		return fmt.Errorf("%s layer cannot backpropagate to label inputs", l.Type())
	}
	if !propagateDown[0] {
		return nil
	}
	scale := float64(top[0].CPUDiff()[0]) / l.normalizer
	x, t, dx := bottom[0].CPUData(), bottom[1].CPUData(), bottom[0].MutableCPUDiff()
	for i, xi := range x {
		if l.ignored(t[i]) {
			dx[i] = 0
			continue
		}
		dx[i] = T((1/(1+math.Exp(-float64(xi))) - float64(t[i])) * scale)
	}
	return nil
}
