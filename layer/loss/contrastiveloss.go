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
		Type:  "ContrastiveLoss",
		New32: newContrastiveLoss[float32], New64: newContrastiveLoss[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newContrastiveLossGPU[float32], newContrastiveLossGPU[float64])},
		ONNX:    layer.ONNXDropped, ONNXWhy: "a loss, used in training only",
	})
}

// ContrastiveLoss compares pairs of feature vectors a, b (N x C) under
// similarity labels y (N, 1 for similar): with d = ||a - b||,
// loss = sum(y d^2 + (1-y) max(margin - d, 0)^2) / 2N, or with
// legacy_version max(margin - d^2, 0) for dissimilar pairs (Caffe's
// ContrastiveLossLayer, the siamese example's loss).
type contrastiveLossLayer[T layer.Float] struct {
	layer.LossBase[T]
	margin float64
	legacy bool
	diff   []T
	distSq []float64
	// The device's diff, squared diff, squared distances and a ones vector
	// (contrastiveloss_cuda.go).
	gdiff, gdiffSq, gdistSq, ones *blob.Blob[T]
}

func newContrastiveLoss[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &contrastiveLossLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	cp := p.GetContrastiveLossParam()
	l.margin, l.legacy = float64(cp.GetMargin()), cp.GetLegacyVersion()
	return l, nil
}

// Type returns "ContrastiveLoss".
func (*contrastiveLossLayer[T]) Type() string { return "ContrastiveLoss" }

// Counts returns the two feature blobs and the similarity labels in, the
// loss out.
func (*contrastiveLossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(3), Top: layer.Exactly(1), AutoTop: true}
}

// AllowForceBackward refuses the similarity labels.
func (*contrastiveLossLayer[T]) AllowForceBackward(i int) bool { return i != 2 }

// LayerSetUp has nothing to do.
func (*contrastiveLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the shapes: a and b N x C (x 1 x 1), y N (x 1 x 1 x 1).
func (l *contrastiveLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	a, b, y := bottom[0], bottom[1], bottom[2]
	if a.NumAxes() < 2 || !a.SameShape(b) || a.Count() != a.Shape()[0]*a.Shape()[1] {
		return fmt.Errorf("the features must be two blobs of the same N x C (x 1 x 1) shape, got %s and %s", a.ShapeString(), b.ShapeString())
	}
	if y.Count() != a.Shape()[0] {
		return fmt.Errorf("one similarity label per pair: %s for %d pairs", y.ShapeString(), a.Shape()[0])
	}
	if cap(l.diff) < a.Count() {
		l.diff = make([]T, a.Count())
	}
	l.diff = l.diff[:a.Count()]
	if cap(l.distSq) < a.Shape()[0] {
		l.distSq = make([]float64, a.Shape()[0])
	}
	l.distSq = l.distSq[:a.Shape()[0]]
	return top[0].Reshape(kit.ScalarShape())
}

// ForwardCPU computes the loss.
func (l *contrastiveLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a, b, y := bottom[0].CPUData(), bottom[1].CPUData(), bottom[2].CPUData()
	num := bottom[0].Shape()[0]
	c := bottom[0].Count() / num
	for i := range num {
		var d2 float64
		for j := i * c; j < (i+1)*c; j++ {
			l.diff[j] = a[j] - b[j]
			d2 += float64(l.diff[j]) * float64(l.diff[j])
		}
		l.distSq[i] = d2
	}
	top[0].MutableCPUData()[0] = T(l.loss(l.distSq, y))
	return nil
}

// loss is the loss of pairs at squared distances distSq with similarity
// labels y.
func (l *contrastiveLossLayer[T]) loss(distSq []float64, y []T) float64 {
	var loss float64
	for i, d2 := range distSq {
		switch {
		case int(y[i]) != 0:
			loss += d2
		case l.legacy:
			loss += max(l.margin-d2, 0)
		default:
			m := max(l.margin-math.Sqrt(d2), 0)
			loss += m * m
		}
	}
	return loss / float64(len(distSq)) / 2
}

// BackwardCPU computes the gradients of both feature blobs (of opposite
// signs).
func (l *contrastiveLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[2] {
		return errors.New("ContrastiveLoss layer cannot backpropagate to similarity label inputs")
	}
	y := bottom[2].CPUData()
	num := bottom[0].Shape()[0]
	c := bottom[0].Count() / num
	for k, sign := range []float64{1, -1} {
		if !propagateDown[k] {
			continue
		}
		dx := bottom[k].MutableCPUDiff()
		alpha := sign * float64(top[0].CPUDiff()[0]) / float64(num)
		for i := range num {
			scale := alpha // similar pairs: alpha * diff
			if int(y[i]) == 0 {
				var mdist float64
				if l.legacy {
					mdist, scale = l.margin-l.distSq[i], -alpha
				} else {
					dist := math.Sqrt(l.distSq[i])
					mdist = l.margin - dist
					scale = -alpha * mdist / (dist + 1e-4)
				}
				if mdist <= 0 {
					scale = 0
				}
			}
			for j := i * c; j < (i+1)*c; j++ {
				dx[j] = T(scale * float64(l.diff[j]))
			}
		}
	}
	return nil
}
