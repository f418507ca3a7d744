package kit

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Reduced is what a GPU engine computing in a 16-bit type (FLOAT16 or
// BFLOAT16) needs around its cuDNN and cuBLAS calls: every blob it reads or
// writes in that type, whatever the blob is stored in; a 16-bit copy of
// its weights, whose FP32 values stay the solver's (master weights); and
// its weight gradients added to their FP32 diffs.
//
// A blob the plan stores in the engine's type is used in place. One stored
// otherwise (a FP32 blob at the edge of the 16-bit part of a net: a data
// layer's top, a loss's bottom) is converted into one of the context's
// scratch buffers (device.Context.Scratch), shared by all its layers and
// valid within one pass: In narrows it, Out hands out scratch that Done
// widens into the blob. Each pass (each bottom's, where a layer has
// several) begins with Begin. The weights' 16-bit copy and gradient are
// made in two more of the context's buffers, within the pass that reads
// them. All of it stays at fixed addresses while the shapes do not grow, so that a
// CUDA graph can record the passes.
//
// An engine computing channels-last (SetChannelsLast) reads and writes its
// blobs, and the 16-bit copies of its weights and their gradients, in that
// order: a blob the plan keeps row-major (or in FP32) is reordered into
// the scratch buffer and back as it is converted.
type Reduced[T Float] struct {
	ctx          *device.Context
	storage      syncedmem.Storage
	channelsLast bool
	slots        map[reducedKey]int // this pass's scratch buffer of each converted blob
}

// SetChannelsLast makes the engine compute on channels-last blobs (in its
// 16-bit type), or row-major ones again.
func (r *Reduced[T]) SetChannelsLast(on bool) error {
	if on && !r.On() {
		return fmt.Errorf("channels-last computation needs a 16-bit type, not %v", r.storage)
	}
	r.channelsLast = on
	return nil
}

// ChannelsLast reports whether the engine computes channels-last.
func (r *Reduced[T]) ChannelsLast() bool { return r.channelsLast }

// orderMatches reports whether b is in the engine's order: the same, or
// one position per image and channel, where both orders are one.
func (r *Reduced[T]) orderMatches(b *blob.Blob[T]) bool {
	if b.ChannelsLast() == r.channelsLast {
		return true
	}
	_, _, s := b.ChannelsLastDims()
	return s == 1
}

// reducedKey names a scratch buffer: a blob (*blob.Blob[T]) and what of
// it the buffer holds.
type reducedKey struct {
	b    any
	role int
}

const (
	roleData = iota
	roleDiff
)

// SetReduced makes r compute in storage s (StorageNative: off). It refuses
// a reduced type for float64 layers.
func (r *Reduced[T]) SetReduced(ctx *device.Context, s syncedmem.Storage) error {
	var zero T
	if _, ok := any(zero).(float64); ok && s.Reduced() {
		return fmt.Errorf("%v computation needs float32 blobs, not float64", s)
	}
	r.ctx, r.storage = ctx, s
	return nil
}

// On reports whether the engine computes in a 16-bit type.
func (r *Reduced[T]) On() bool { return r != nil && r.storage.Reduced() }

// Storage returns the type the engine computes in.
func (r *Reduced[T]) Storage() syncedmem.Storage { return r.storage }

// DNNType is the engine's type for cuDNN descriptors.
func (r *Reduced[T]) DNNType() cuda.DNNType {
	if r.storage == syncedmem.StorageBFloat16 {
		return cuda.DNNBFloat16
	}
	return cuda.DNNHalf
}

// BlasType is the engine's type for cuBLAS.
func (r *Reduced[T]) BlasType() cuda.BlasType {
	if r.storage == syncedmem.StorageBFloat16 {
		return cuda.BlasBFloat16
	}
	return cuda.BlasHalf
}

// Suffix names kernels of the engine's type: "_f16" or "_bf16" (the
// 16-bit kernels of kernels/precision.cu and of the layers' own files).
func (r *Reduced[T]) Suffix() string {
	if r.storage == syncedmem.StorageBFloat16 {
		return "_bf16"
	}
	return "_f16"
}

func key[T Float](b *blob.Blob[T], role int) reducedKey {
	return reducedKey{b: b, role: role}
}

// stored reports whether b's data (or diff) is stored in the engine's
// type. Memory of the other 16-bit type is a broken plan (the precision
// pass stores a blob in 16 bits only where every layer touching it
// computes in that type): it panics rather than read 16-bit values as
// float32.
func (r *Reduced[T]) stored(b *blob.Blob[T], diff bool) bool {
	m := b.Data()
	if diff {
		m = b.Diff()
	}
	if m != nil && m.Storage().Reduced() && m.Storage() != r.storage {
		panic(fmt.Sprintf("kit: a %v engine given a blob stored in %v", r.storage, m.Storage()))
	}
	return m != nil && m.Storage() == r.storage && r.orderMatches(b)
}

// Begin starts a pass: the scratch buffers are free again.
func (r *Reduced[T]) Begin() { clear(r.slots) }

// edge returns the context's scratch buffer for b's data (or diff) in this
// pass, of at least n 16-bit values: the same one for the same blob and
// role (an in-place layer reads and writes one blob).
func (r *Reduced[T]) edge(b *blob.Blob[T], diff bool, n int) (cuda.DevicePtr, error) {
	if r.slots == nil {
		r.slots = map[reducedKey]int{}
	}
	k := key(b, role(diff))
	i, ok := r.slots[k]
	if !ok {
		i = len(r.slots)
		if i == device.ScratchBuffers {
			return 0, fmt.Errorf("more than %d blobs to convert to %v in one pass", device.ScratchBuffers, r.storage)
		}
		r.slots[k] = i
	}
	return r.ctx.Scratch(i, max(2*n, 2))
}

func role(diff bool) int {
	if diff {
		return roleDiff
	}
	return roleData
}

// In returns b's data (or diff) in the engine's type for reading.
func (r *Reduced[T]) In(g *device.GPUView[T], b *blob.Blob[T], diff bool) (cuda.DevicePtr, error) {
	if r.stored(b, diff) {
		if diff {
			return g.Diff(b), nil
		}
		return g.Data(b), nil
	}
	p, err := r.edge(b, diff, b.Count())
	if err != nil {
		return 0, err
	}
	src := g.Data(b)
	if diff {
		src = g.Diff(b)
	}
	return p, r.toEngine(b, src, p)
}

// toEngine converts b's values at src (its storage and order) into the
// engine's type and order at dst.
func (r *Reduced[T]) toEngine(b *blob.Blob[T], src, dst cuda.DevicePtr) error {
	n, c, s := b.ChannelsLastDims()
	switch {
	case b.Storage().Reduced() && b.ChannelsLast():
		return r.reorder("from_cl16", false, n, c, s, src, dst)
	case b.Storage().Reduced():
		return r.reorder("to_cl16", true, n, c, s, src, dst)
	case r.channelsLast:
		return r.reorder("narrow_cl"+r.Suffix(), true, n, c, s, src, dst)
	}
	return r.convert("narrow", b.Count(), src, dst)
}

// fromEngine is toEngine's inverse.
func (r *Reduced[T]) fromEngine(b *blob.Blob[T], src, dst cuda.DevicePtr) error {
	n, c, s := b.ChannelsLastDims()
	switch {
	case b.Storage().Reduced() && b.ChannelsLast():
		return r.reorder("to_cl16", true, n, c, s, src, dst)
	case b.Storage().Reduced():
		return r.reorder("from_cl16", false, n, c, s, src, dst)
	case r.channelsLast:
		return r.reorder("widen_cl"+r.Suffix(), false, n, c, s, src, dst)
	}
	return r.convert("widen", b.Count(), src, dst)
}

// reorder runs a channels-last conversion kernel of precision.cu over n
// images of c channels and s positions, toward channels-last order or
// back from it: 32 x 32 tiles of each image's channels and positions, 256
// threads a tile.
func (r *Reduced[T]) reorder(kernel string, toChannelsLast bool, n, c, s int, x, y cuda.DevicePtr) error {
	if n*c*s == 0 {
		return nil
	}
	f, err := Kernel[float32](r.ctx, kitKernels, "precision.cu", kernel)
	if err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Int(c).Int(s).Ptr(x).Ptr(y)
	// The grid's x runs over the tiles of the columns of the matrix the
	// kernel reads (positions going channels-last, channels coming back),
	// its y over the rows.
	rows, cols := c, s
	if !toChannelsLast {
		rows, cols = s, c
	}
	tiles := func(v int) int { return (v + clTile - 1) / clTile }
	grid := cuda.Dim3{X: tiles(cols), Y: tiles(rows), Z: min(n, 65535)}
	return f.Launch(grid, cuda.Dim3{X: clTile, Y: 8}, 0, nil, &a)
}

// clTile is CL_TILE of precision.cu.
const clTile = 32

// Out returns memory to write b's data (or diff) in the engine's type;
// Done finishes the write.
func (r *Reduced[T]) Out(g *device.GPUView[T], b *blob.Blob[T], diff bool) (cuda.DevicePtr, error) {
	if r.stored(b, diff) {
		if diff {
			return g.MutableDiff(b), nil
		}
		return g.MutableData(b), nil
	}
	return r.edge(b, diff, b.Count())
}

// Done widens what was written to Out's scratch into b, where b is not
// stored in the engine's type.
func (r *Reduced[T]) Done(g *device.GPUView[T], b *blob.Blob[T], diff bool) error {
	if r.stored(b, diff) {
		return nil
	}
	p, err := r.edge(b, diff, b.Count())
	if err != nil {
		return err
	}
	dst := g.MutableData(b)
	if diff {
		dst = g.MutableDiff(b)
	}
	return r.fromEngine(b, p, dst)
}

// Weights returns a 16-bit copy of w's FP32 data, made now in the
// context's weights scratch (device.ScratchWeights), which every layer of
// the net shares: call it in each pass that reads the weights, forward and
// backward (a replayed CUDA graph makes it again after each update). One
// weight blob per pass.
func (r *Reduced[T]) Weights(g *device.GPUView[T], w *blob.Blob[T]) (cuda.DevicePtr, error) {
	p, err := r.ctx.Scratch(device.ScratchWeights, max(2*w.Count(), 2))
	if err != nil {
		return 0, err
	}
	if r.channelsLast { // a filter's input channels last: (output, kernel..., input)
		n, c, s := w.ChannelsLastDims()
		return p, r.reorder("narrow_cl"+r.Suffix(), true, n, c, s, g.Data(w), p)
	}
	return p, r.convert("narrow", w.Count(), g.Data(w), p)
}

// WeightDiff returns 16-bit scratch for a gradient of w's shape, the
// context's (device.ScratchWeightDiff), which AddWeightDiff adds to w's
// FP32 diff in the same pass.
func (r *Reduced[T]) WeightDiff(w *blob.Blob[T]) (cuda.DevicePtr, error) {
	return r.ctx.Scratch(device.ScratchWeightDiff, max(2*w.Count(), 2))
}

// AddWeightDiff adds the gradient in WeightDiff's scratch to w's diff (Caffe
// accumulates parameter gradients).
func (r *Reduced[T]) AddWeightDiff(g *device.GPUView[T], w *blob.Blob[T]) error {
	p, err := r.WeightDiff(w)
	if err != nil {
		return err
	}
	if r.channelsLast {
		n, c, s := w.ChannelsLastDims()
		return r.reorder("accumulate_cl"+r.Suffix(), false, n, c, s, p, g.MutableDiff(w))
	}
	return r.convert("accumulate", w.Count(), p, g.MutableDiff(w))
}

// AddBias adds bias (FP32, one value per channel of dim) to y, n values of
// the engine's type laid out as (outer, dim, inner), or channels-last as
// (outer, inner, dim).
func (r *Reduced[T]) AddBias(n, dim, inner int, y, bias cuda.DevicePtr) error {
	if r.channelsLast {
		inner = 1 // the channel of value i is i % dim
	}
	var a cuda.Args
	a.Int(n).Int(dim).Int(inner).Ptr(y).Ptr(bias)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", "add_bias"+r.Suffix(), n, &a)
}

// AddBiasGradient adds to db (FP32, one value per channel) the sums of dy
// (num x dim x inner values of the engine's type) over images and inner
// positions.
func (r *Reduced[T]) AddBiasGradient(num, dim, inner int, dy, db cuda.DevicePtr) error {
	var a cuda.Args
	a.Int(num).Int(dim).Int(inner).Ptr(dy).Ptr(db)
	return LaunchBlocks[float32](r.ctx, kitKernels, "precision.cu", "bias_grad"+r.Suffix(), dim, &a)
}

// Copy copies n values of the engine's type from x to y.
func (r *Reduced[T]) Copy(n int, x, y cuda.DevicePtr) error {
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(y)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", "copy16", n, &a)
}

// convert runs kernel op ("narrow", "widen", "accumulate") over n values.
func (r *Reduced[T]) convert(op string, n int, x, y cuda.DevicePtr) error {
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(y)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", op+r.Suffix(), n, &a)
}

// Sum2 sets y = c0*a + c1*b over n values of the engine's type, eight at
// a time where the arrays are aligned to 16 bytes.
func (r *Reduced[T]) Sum2(n int, c0 float32, a cuda.DevicePtr, c1 float32, b, y cuda.DevicePtr) error {
	var args cuda.Args
	args.Int(n).Float32(c0).Ptr(a).Float32(c1).Ptr(b).Ptr(y)
	name, threads := HalfVectorKernel("sum2", n, a, b, y)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", name+r.Suffix(), threads, &args)
}

// HalfVectorKernel names the form of a 16-bit element-wise kernel for
// arrays ps of n values, and the threads it wants: name+"_vec", one thread
// per eight values, where every array is aligned to 16 bytes (the kernel
// takes the tail one at a time), else name, one per value.
func HalfVectorKernel(name string, n int, ps ...cuda.DevicePtr) (string, int) {
	if VectorAligned(ps...) {
		return name + "_vec", (n + 7) / 8
	}
	return name, n
}

// Axpy adds alpha*x to y over n values of the engine's type.
func (r *Reduced[T]) Axpy(n int, alpha float32, x, y cuda.DevicePtr) error {
	var a cuda.Args
	a.Int(n).Float32(alpha).Ptr(x).Ptr(y)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", "axpy"+r.Suffix(), n, &a)
}

// Scale sets y = alpha*x over n values of the engine's type (x may be y).
func (r *Reduced[T]) Scale(n int, alpha float32, x, y cuda.DevicePtr) error {
	var a cuda.Args
	a.Int(n).Float32(alpha).Ptr(x).Ptr(y)
	return Launch[float32](r.ctx, kitKernels, "precision.cu", "scale"+r.Suffix(), n, &a)
}
