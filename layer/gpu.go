package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
)

// makeView makes the layer's view of its GPU context, once: its math
// (loading the context's kernels on their first use) and accessors.
func (b *Base[T]) makeView() error {
	if b.view != nil {
		return nil
	}
	v, err := device.NewGPUView[T](b.ctx)
	if err != nil {
		return err
	}
	b.view = v
	return nil
}

// GPU returns the layer's view of its GPU context for a new pass, with any
// error of an earlier pass cleared. Forward and Backward make it before a
// GPU pass.
func (b *Base[T]) GPU() *device.GPUView[T] {
	b.view.ResetErr()
	return b.view
}

// gpuLoss is the weighted loss of the tops, computed on the device and
// read back. A NaN loss is explained by the engine where it can say why
// (NaNExplainer: a label out of range), reading what it needs only then.
func gpuLoss[T Float](l Layer[T], top []*blob.Blob[T]) (T, error) {
	var loss T
	b := l.LayerBase()
	g := b.GPU()
	for i, t := range top {
		if b.Loss(i) != 0 {
			loss += g.Dot(t.Count(), g.Data(t), g.Diff(t))
		}
	}
	if err := g.Err(); err != nil {
		return 0, err
	}
	if loss != loss {
		if err := ExplainNaN(l); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// gpuLossInto adds the weighted loss of the tops to acc[0] on the device.
func gpuLossInto[T Float](b *Base[T], top []*blob.Blob[T], acc *blob.Blob[T]) error {
	g := b.GPU()
	for i, t := range top {
		if b.Loss(i) != 0 {
			g.DotAccumulate(t.Count(), g.Data(t), g.Diff(t), 1, g.MutableData(acc))
		}
	}
	return g.Err()
}

// NaNExplainer is implemented by an engine that can say why its loss came out NaN, from
// its inputs of the last forward pass (a label that is no class). It is
// asked only once the loss has been read back as NaN.
type NaNExplainer interface{ ExplainNaN() error }

// ExplainNaN asks the layer why its last loss was NaN: an error naming the
// layer and the cause where its engine can tell (SoftmaxWithLoss: a label
// out of range, else "loss is NaN", which its forward pass reported before
// its loss stayed on the device), nil for other layers. The solver asks
// after a replayed CUDA graph, which reads no label back while it runs.
func ExplainNaN[T Float](l Layer[T]) error {
	e, ok := l.LayerBase().engine.(NaNExplainer)
	if !ok {
		return nil
	}
	if err := e.ExplainNaN(); err != nil {
		return errorf(l, err)
	}
	return nil
}
