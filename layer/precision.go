package layer

import (
	"fmt"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// ReducedEngine is implemented by GPU engines that can compute in a 16-bit
// type (mixed precision, NVCaffe's FLOAT16 layers, bf16): cuDNN's
// convolution, pooling, activations and LRN (FLOAT16 only), cuBLAS's inner
// product, gocaffe's ReLU and Dropout kernels. Such an
// engine reads and writes its blobs in that type where the plan stores
// them so (syncedmem.Storage) and converts at its edges where it does
// not; its weights stay FP32 (the solver's master copy) and its weight
// gradients are summed into FP32 diffs.
type ReducedEngine interface {
	// SetReduced makes the engine compute in s (StorageFloat16 or
	// StorageBFloat16), or in the layer's own type again for
	// StorageNative; an error says why the engine, as set up, cannot.
	SetReduced(s syncedmem.Storage) error
}

// SetReduced asks l's engine to compute in s; an error names the layer
// and says why not (an engine of the host, or one without a 16-bit path).
func SetReduced[T Float](l Layer[T], s syncedmem.Storage) error {
	b := l.LayerBase()
	e, ok := b.engine.(ReducedEngine)
	if !ok || !b.EngineOnGPU() {
		return fmt.Errorf("layer %q (%s, engine %v): no %v path", b.Name(), l.Type(), b.EngineName(), s)
	}
	if err := e.SetReduced(s); err != nil {
		return fmt.Errorf("layer %q (%s): %v: %w", b.Name(), l.Type(), s, err)
	}
	b.reduced = s
	return nil
}

// Reduced returns the 16-bit type the layer computes in (SetReduced), or
// StorageNative.
func (b *Base[T]) Reduced() syncedmem.Storage { return b.reduced }

// ChannelsLastEngine is implemented by GPU engines computing in a 16-bit
// type that can also compute on channels-last (NHWC) blobs, where tensor
// cores and cuDNN's graph API are fastest: cuDNN's convolution, BatchNorm's
// own kernels, MAX and AVE pooling, and the element-wise layers (ReLU,
// Eltwise, Split), whose arithmetic does not depend on the order. Such an
// engine converts at its edges (kit.Reduced) a blob the plan keeps
// row-major.
type ChannelsLastEngine interface {
	// AcceptsChannelsLast says whether the engine, as set up and in its
	// 16-bit type, can compute channels-last.
	AcceptsChannelsLast() bool
	// SetChannelsLast makes it compute channels-last, or row-major again.
	SetChannelsLast(on bool) error
}

// AcceptsChannelsLast reports whether l's engine computes in a 16-bit type
// on the GPU and can do so channels-last.
func AcceptsChannelsLast[T Float](l Layer[T]) bool {
	b := l.LayerBase()
	e, ok := b.engine.(ChannelsLastEngine)
	return ok && b.EngineOnGPU() && b.reduced.Reduced() && e.AcceptsChannelsLast()
}

// SetChannelsLast asks l's engine to compute channels-last (or row-major);
// an error names the layer.
func SetChannelsLast[T Float](l Layer[T], on bool) error {
	b := l.LayerBase()
	e, ok := b.engine.(ChannelsLastEngine)
	if !ok {
		if !on {
			return nil
		}
		return fmt.Errorf("layer %q (%s): no channels-last path", b.Name(), l.Type())
	}
	if err := e.SetChannelsLast(on); err != nil {
		return fmt.Errorf("layer %q (%s): channels-last: %w", b.Name(), l.Type(), err)
	}
	b.channelsLast = on
	return nil
}

// ChannelsLast reports whether the layer computes channels-last
// (SetChannelsLast).
func (b *Base[T]) ChannelsLast() bool { return b.channelsLast }
