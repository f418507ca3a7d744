// Package layer is the layer contract: the Layer interface and its
// lifecycle, Base (the state every layer has), one Spec per layer type and
// the registry that builds a layer from its LayerParameter's type string,
// engines, fusion, and the evaluations a solver scores test nets with. The
// layer types live in packages of their own by family (layer/neuron,
// layer/vision, layer/datalayer, ...); layer/all registers them all, and
// package net imports it.
//
// # Lifecycle
//
// As in Caffe, a layer is set up once and then run many times:
//
//	l, err := layer.New[float32](param)      // from the registry
//	err = layer.SetUp(l, bottom, top)         // check blob counts, LayerSetUp, Reshape, loss weights
//	loss, err := layer.Forward(l, bottom, top) // Reshape, forward, weighted loss
//	err = layer.Backward(l, top, propagateDown, bottom)
//
// SetUp, Forward and Backward are functions rather than methods so that the
// sequence Caffe's Layer base class enforces is written once, for every
// layer. Errors they return name the layer and its type.
//
// # Devices and engines
//
// A layer runs on the device context of its Base (SetContext; nil, the
// default, is the host), which a net hands to each of its layers. Its
// compute is an Engine, a strategy SetUp chooses for that context from the
// engines registered for its type and the engine field of its parameter
// (convolution_param.engine, pooling_param.engine, ...), as Caffe's layer
// factory does:
//
//   - on the host every layer runs its own CPU half, ForwardCPU and
//     BackwardCPU, which every layer has (Caffe's Forward_cpu);
//   - on a GPU, DEFAULT takes the best registered engine that accepts the
//     layer (cuDNN's, then gocaffe's own GPU half), CAFFE takes gocaffe's
//     GPU half, and CUDNN takes cuDNN's; a layer cuDNN refuses is an error
//     unless its EngineSpec falls back, as in Caffe. Asking for CUDNN where
//     gocaffe has no cuDNN engine for the type falls back to gocaffe's own
//     with a warning (a Caffe built without cuDNN fails instead), so a net
//     written for a cuDNN Caffe runs unchanged;
//   - a type with no GPU engine runs its CPU half on a GPU too, and the
//     blobs' SyncedMemory moves the data, as Caffe's Forward_gpu falls back
//     to Forward_cpu.
//
// RegisterEngine adds an engine; its EngineSpec says which type and engine
// it is and, through Accepts, which parameters it can take (cuDNN's
// convolution takes no dilation). Arithmetic that is the same on both
// devices (convolution, inner product) is written once against a
// device.View and called with device.HostView from the CPU half and with
// the layer's GPU view from the GPU half.
//
// # Fusion
//
// A net offers each pair of consecutive layers to Fuse once they are set
// up. Where the first layer's engine can compute the second's pass too
// (BatchNorm with the Scale and the ReLU in place after it, an Eltwise sum
// with its ReLU, a convolution's bias with its ReLU's forward pass), the
// second layer's engine is skipped for that pass (Base.fusedBy,
// forwardFusedBy), and every blob's data and diff are what the two layers
// would have left, as in Caffe. Each pass checks that the fusion still
// holds (its shape, its engine's choice) and otherwise runs both layers.
// A net's partial passes (ForwardFromTo, BackwardFromTo) suspend the
// fusions their range splits (SuspendFusion).
//
// # Writing a layer
//
// A layer type is its Spec, registered once in an init function of its
// file (RegisterType), its file(s) and its tests: docs/writing-a-layer.md
// walks through one and gives the checklist. The type keeps no
// package-level state: kernels are compiled and cached by the layer's
// device context. An engine holds its layer in a field rather than
// embedding it: embedding would give every engine type wrappers of all the
// layer's methods (half a megabyte of binary over the catalogue). Layers
// of other packages, a program's own, are written the same way; Register
// is the short form of RegisterType for a type with no GPU half. A layer
// logs through Base.Logger(), the logger its net gives it (slog.Default()
// when alone), never a package-level logger.
package layer

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"weak"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/filler"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Float is the element type of a layer's blobs.
type Float = blob.Float

// Layer is one layer type's behaviour. Base provides the state common to
// all layers.
type Layer[T Float] interface {
	// LayerBase returns the layer's common state.
	LayerBase() *Base[T]
	// Type returns the layer's type string, e.g. "Convolution".
	Type() string
	// Counts returns how many bottom and top blobs the layer takes.
	Counts() BlobCounts
	// LayerSetUp does the layer-specific one-time setup: read parameters,
	// create and fill learnable blobs.
	LayerSetUp(bottom, top []*blob.Blob[T]) error
	// Reshape sizes the tops (and internal buffers) for the bottoms' shapes.
	// It runs before every forward pass.
	Reshape(bottom, top []*blob.Blob[T]) error
	// ForwardCPU computes the tops from the bottoms.
	ForwardCPU(bottom, top []*blob.Blob[T]) error
	// BackwardCPU computes the bottoms' diffs (where propagateDown says) and
	// the learnable blobs' diffs (where ParamPropagateDown says) from the
	// tops' diffs. Parameter diffs are accumulated, not overwritten.
	BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error
}

// FLOPCounter is implemented by layers whose work is mostly matrix
// products (convolution, inner product): the floating-point operations of
// a forward pass and of a backward pass (weight gradient, and the bottom's
// with propagateDown), so that `gocaffe time` can report GFLOP/s.
type FLOPCounter interface {
	FLOPs(propagateDown bool) (forward, backward float64)
}

// AllowsInPlace reports whether l may run in place: its type's Spec says
// so (Spec.InPlace).
func AllowsInPlace[T Float](l Layer[T]) bool {
	s := specOf(l)
	return s != nil && s.InPlace
}

// ForceBackwardAllower is implemented by layers that cannot propagate to
// some bottom even when the net forces backward (a loss layer's labels).
type ForceBackwardAllower interface {
	AllowForceBackward(bottomIndex int) bool
}

// AllowForceBackward reports whether force_backward may make l propagate to
// bottom i.
func AllowForceBackward[T Float](l Layer[T], i int) bool {
	if a, ok := l.(ForceBackwardAllower); ok {
		return a.AllowForceBackward(i)
	}
	return true
}

// Range bounds a number of blobs. Max < 0 means no upper bound.
type Range struct{ Min, Max int }

// Exactly is the range of exactly n blobs.
func Exactly(n int) Range { return Range{n, n} }

// AtLeast is the range of n or more blobs.
func AtLeast(n int) Range { return Range{n, -1} }

// Between is the range of min to max blobs, inclusive.
func Between(min, max int) Range { return Range{min, max} }

// check returns an error if n is outside the range.
func (r Range) check(n int, what string) error {
	switch {
	case r.Min == r.Max && n != r.Min:
		return fmt.Errorf("takes %d %s blob(s), got %d", r.Min, what, n)
	case n < r.Min:
		return fmt.Errorf("takes at least %d %s blob(s), got %d", r.Min, what, n)
	case r.Max >= 0 && n > r.Max:
		return fmt.Errorf("takes at most %d %s blob(s), got %d", r.Max, what, n)
	}
	return nil
}

// BlobCounts says how many bottoms and tops a layer takes (Caffe's
// ExactNum/Min/Max Bottom/Top Blobs).
type BlobCounts struct {
	Bottom, Top Range
	// EqualBottomTop: one top for each bottom.
	EqualBottomTop bool
	// AutoTop: the net adds anonymous tops up to Top.Min when the layer
	// lists fewer.
	AutoTop bool
}

// Base is the state every layer has: its parameter, learnable blobs, loss
// weights, device and random number generator. Layers embed it.
type Base[T Float] struct {
	param              *caffepb.LayerParameter
	blobs              []*blob.Blob[T]
	paramPropagateDown []bool
	loss               []T
	ctx                *device.Context    // nil: the host
	view               *device.GPUView[T] // the layer's own view of a GPU context, made once
	engine             Engine[T]          // chosen by SetUp for ctx (engine.go)
	engineName         EngineName         // which engine SetUp chose (EngineName)
	reshaper           EngineReshaper[T]  // engine, if it has buffers of its own
	engineOnGPU        bool               // engine computes through view
	reduced            syncedmem.Storage  // the 16-bit type the engine computes in (SetReduced)
	channelsLast       bool               // the engine computes on channels-last blobs (SetChannelsLast)
	// fusedBy, if not nil, says whether the layer before this one computes
	// this one's passes too (Fuse); the engine is then skipped.
	fusedBy func() bool
	// fusedInto is the layer that computes this one's passes while
	// fusedBy says so.
	fusedInto Layer[T]
	// forwardFusedBy and forwardFusedInto are the same for the forward
	// pass alone.
	forwardFusedBy   func() bool
	forwardFusedInto Layer[T]
	// fusionSuspended makes this layer compute its own passes only, not
	// the next layer's (SuspendFusion).
	fusionSuspended bool
	// forwardSkipped says the last forward pass was the layer before's
	// (fused): what the layer saves for its backward pass was not saved.
	forwardSkipped bool
	rng            *rand.Rand
	src            *rand.PCG                    // rng's source, kept so Reseed allocates nothing
	log            *slog.Logger                 // nil: slog.Default()
	made           []weak.Pointer[blob.Blob[T]] // the blobs NewBlob made (OwnBlobs), not kept alive
	hostScratch    *HostScratch                 // the net's shared host scratch (SetHostScratch), nil for none
}

// Init sets the base up from p, which it copies: layers may fill in
// defaults without touching the caller's parameter. Learnable blobs stored
// in p (a model's weights) are loaded.
func (b *Base[T]) Init(p *caffepb.LayerParameter) error {
	b.param = proto.Clone(p).(*caffepb.LayerParameter)
	b.blobs = b.blobs[:0]
	for i, bp := range b.param.Blobs {
		nb, err := blob.New[T]()
		if err != nil {
			return err
		}
		if err := nb.FromProto(bp, true); err != nil {
			return fmt.Errorf("layer %q: blob %d: %w", p.GetName(), i, err)
		}
		b.blobs = append(b.blobs, nb)
	}
	b.param.Blobs = nil // now in b.blobs; no second copy
	return nil
}

// LayerBase returns b, so that layers embedding Base satisfy Layer.
func (b *Base[T]) LayerBase() *Base[T] { return b }

// Param returns the layer's parameter (the layer's own copy).
func (b *Base[T]) Param() *caffepb.LayerParameter { return b.param }

// Name returns the layer's name.
func (b *Base[T]) Name() string { return b.param.GetName() }

// Phase returns the phase the layer runs in (TRAIN or TEST).
func (b *Base[T]) Phase() caffepb.Phase { return b.param.GetPhase() }

// Blobs returns the learnable blobs (weights, biases, ...). A net shares a
// parameter between layers by making these blobs share memory.
func (b *Base[T]) Blobs() []*blob.Blob[T] { return b.blobs }

// AddBlob appends a learnable blob (a layer's LayerSetUp creating its
// weights).
func (b *Base[T]) AddBlob(nb *blob.Blob[T]) { b.blobs = append(b.blobs, nb) }

// SetBlobs replaces the learnable blobs.
func (b *Base[T]) SetBlobs(blobs []*blob.Blob[T]) { b.blobs = blobs }

// Loss returns the loss weight of top i (0 if the top is not a loss).
func (b *Base[T]) Loss(i int) T {
	if i < len(b.loss) {
		return b.loss[i]
	}
	return 0
}

// ParamPropagateDown reports whether Backward computes the diff of
// learnable blob i (true unless switched off).
func (b *Base[T]) ParamPropagateDown(i int) bool {
	return i >= len(b.paramPropagateDown) || b.paramPropagateDown[i]
}

// SetParamPropagateDown switches the diff of learnable blob i on or off.
func (b *Base[T]) SetParamPropagateDown(i int, v bool) {
	for len(b.paramPropagateDown) <= i {
		b.paramPropagateDown = append(b.paramPropagateDown, true)
	}
	b.paramPropagateDown[i] = v
}

// Context returns the device context the layer runs on; nil is the host.
func (b *Base[T]) Context() *device.Context { return b.ctx }

// SetContext puts the layer on c's device (nil: the host). Call it before
// SetUp, so that the buffers the layer creates belong to that device; a net
// hands every layer its own context.
func (b *Base[T]) SetContext(c *device.Context) {
	b.ctx = c
	b.view, b.engine, b.reshaper, b.engineOnGPU = nil, nil, nil, false
	for _, bl := range b.blobs {
		bl.SetDevice(c.Device())
	}
}

// Logger returns the logger the layer writes its lines to: the one SetLogger
// gave it (a net gives each layer its own), or slog.Default().
func (b *Base[T]) Logger() *slog.Logger { return logf.OrDefault(b.log) }

// SetLogger sets the layer's logger; nil means slog.Default().
func (b *Base[T]) SetLogger(l *slog.Logger) { b.log = l }

// RNG returns the layer's random number generator (for fillers, dropout
// masks, stochastic pooling), seeded from the clock unless Reseed or SetRNG
// gave it a seed.
func (b *Base[T]) RNG() *rand.Rand {
	if b.rng == nil {
		b.Reseed(uint64(time.Now().UnixNano()))
	}
	return b.rng
}

// Reseed restarts the layer's random number generator from seed, as
// mathfn.NewRNG(seed) would, without allocating: a solver reseeds every
// layer at every iteration so that a run resumed from a snapshot draws the
// same numbers as an uninterrupted one.
func (b *Base[T]) Reseed(seed uint64) {
	if b.src == nil {
		b.src = &rand.PCG{}
		b.rng = rand.New(b.src)
	}
	mathfn.SeedPCG(b.src, seed)
}

// SetRNG sets the layer's random number generator (Reseed then starts a
// fresh one).
func (b *Base[T]) SetRNG(r *rand.Rand) { b.rng, b.src = r, nil }

// NewBlob returns a blob of the given shape on the layer's device.
func (b *Base[T]) NewBlob(shape ...int) (*blob.Blob[T], error) {
	nb, err := blob.New[T](shape...)
	if err != nil {
		return nil, err
	}
	if d := b.ctx.Device(); d != nil {
		nb.SetDevice(d)
	}
	// Those a layer dropped (an SPP's levels after a Reshape) go.
	b.made = slices.DeleteFunc(b.made, func(p weak.Pointer[blob.Blob[T]]) bool { return p.Value() == nil })
	b.made = append(b.made, weak.Make(nb))
	return nb, nil
}

// OwnBlobs returns the blobs NewBlob made for the layer and its engines
// that are still in use, its learnable blobs among them: what a report of
// the memory the layer holds walks.
func (b *Base[T]) OwnBlobs() []*blob.Blob[T] {
	var own []*blob.Blob[T]
	for _, p := range b.made {
		if nb := p.Value(); nb != nil {
			own = append(own, nb)
		}
	}
	return own
}

// NewParamBlob returns a learnable blob of the given shape filled by the
// filler fp describes (Caffe's default, constant 0, when fp is nil). No
// dimensions make a scalar (no axes, count 1), as Caffe's Blob of an empty
// shape.
func (b *Base[T]) NewParamBlob(fp *caffepb.FillerParameter, shape ...int) (*blob.Blob[T], error) {
	nb, err := b.NewBlob()
	if err != nil {
		return nil, err
	}
	if err := nb.Reshape(shape); err != nil {
		return nil, err
	}
	f, err := filler.New[T](fp)
	if err != nil {
		return nil, err
	}
	if err := f.Fill(nb, b.RNG()); err != nil {
		return nil, err
	}
	return nb, nil
}

// CheckParamShapes checks learnable blobs loaded from a model against the
// shapes the layer needs.
func (b *Base[T]) CheckParamShapes(names []string, shapes ...[]int) error {
	if len(b.blobs) != len(shapes) {
		return fmt.Errorf("incorrect number of weight blobs: %d, want %d (%s)", len(b.blobs), len(shapes), strings.Join(names, ", "))
	}
	for i, want := range shapes {
		if !slices.Equal(b.blobs[i].Shape(), want) {
			return fmt.Errorf("incorrect %s shape: expected %v, got %s", names[i], want, b.blobs[i].ShapeString())
		}
	}
	return nil
}

// errorf wraps an error with the layer's name and type.
func errorf[T Float](l Layer[T], err error) error {
	return fmt.Errorf("layer %q (%s): %w", l.LayerBase().Name(), l.Type(), err)
}

// lossLayer is implemented by LossBase: such layers get loss weight 1 on
// their first top unless the parameter says otherwise.
type lossLayer interface{ isLossLayer() }

// SetUp checks the blob counts, then runs the layer's LayerSetUp and
// Reshape and sets up its loss weights (Caffe's Layer::SetUp).
func SetUp[T Float](l Layer[T], bottom, top []*blob.Blob[T]) (err error) {
	defer recoverDevice(l, &err)
	if err := checkBlobCounts(l, len(bottom), len(top)); err != nil {
		return errorf(l, err)
	}
	if err := l.LayerSetUp(bottom, top); err != nil {
		return errorf(l, err)
	}
	if err := chooseEngine(l); err != nil {
		return errorf(l, err)
	}
	if err := reshape(l, bottom, top); err != nil {
		return errorf(l, err)
	}
	if err := setLossWeights(l, top); err != nil {
		return errorf(l, err)
	}
	return nil
}

func checkBlobCounts[T Float](l Layer[T], nBottom, nTop int) error {
	c := l.Counts()
	if err := c.Bottom.check(nBottom, "bottom"); err != nil {
		return err
	}
	if err := c.Top.check(nTop, "top"); err != nil {
		return err
	}
	if c.EqualBottomTop && nBottom != nTop {
		return fmt.Errorf("produces one top for each bottom, got %d bottoms and %d tops", nBottom, nTop)
	}
	return nil
}

// setLossWeights records each top's loss weight and stores it in the top's
// diff, where the layer's backward pass reads it (Caffe's SetLossWeights).
func setLossWeights[T Float](l Layer[T], top []*blob.Blob[T]) error {
	b := l.LayerBase()
	if _, ok := l.(lossLayer); ok && len(b.param.LossWeight) == 0 {
		b.param.LossWeight = []float32{1}
	}
	weights := b.param.LossWeight
	if len(weights) > 0 && len(weights) != len(top) {
		return fmt.Errorf("loss_weight must be unspecified or given once per top blob: %d weights for %d tops", len(weights), len(top))
	}
	b.loss = make([]T, len(top))
	for i, w := range weights {
		if w == 0 {
			continue
		}
		b.loss[i] = T(w)
		mathfn.Set(top[i].Count(), T(w), top[i].MutableCPUDiff())
	}
	return nil
}

// Forward reshapes the layer, runs its forward pass on its device and
// returns the weighted loss of its loss tops: sum over tops of
// loss weight * sum(top data).
func Forward[T Float](l Layer[T], bottom, top []*blob.Blob[T]) (loss T, err error) {
	defer recoverDevice(l, &err)
	if err := forwardPass(l, bottom, top); err != nil {
		return 0, err
	}
	b := l.LayerBase()
	if b.engineOnGPU {
		return gpuLoss(l, top)
	}
	for i, t := range top {
		if b.Loss(i) != 0 {
			loss += mathfn.Dot(t.Count(), t.CPUData(), t.CPUDiff())
		}
	}
	return loss, nil
}

// ForwardOnDevice is Forward for a layer computing on the GPU that adds the
// weighted loss of its loss tops to the first element of acc's device data
// instead of returning it, so that nothing waits for the device: the form a
// recorded CUDA graph can replay. It fails for a layer on the host.
func ForwardOnDevice[T Float](l Layer[T], bottom, top []*blob.Blob[T], acc *blob.Blob[T]) (err error) {
	defer recoverDevice(l, &err)
	if err := forwardPass(l, bottom, top); err != nil {
		return err
	}
	b := l.LayerBase()
	if !b.engineOnGPU {
		return errorf(l, fmt.Errorf("ForwardOnDevice: the layer computes on the host"))
	}
	if err := gpuLossInto(b, top, acc); err != nil {
		return errorf(l, err)
	}
	return nil
}

// forwardPass chooses the engine when needed, reshapes and runs the
// forward pass (unless a fused neighbour computes it).
func forwardPass[T Float](l Layer[T], bottom, top []*blob.Blob[T]) error {
	b := l.LayerBase()
	if b.engine == nil { // not set up on this context
		if err := chooseEngine(l); err != nil {
			return errorf(l, err)
		}
	}
	if err := reshape(l, bottom, top); err != nil {
		return errorf(l, err)
	}
	b.forwardSkipped = (b.fusedBy != nil && b.fusedBy()) || (b.forwardFusedBy != nil && b.forwardFusedBy())
	if !b.forwardSkipped {
		if err := b.engine.Forward(bottom, top); err != nil {
			return errorf(l, err)
		}
	}
	return nil
}

// Backward runs the layer's backward pass on its device.
func Backward[T Float](l Layer[T], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) (err error) {
	defer recoverDevice(l, &err)
	if len(propagateDown) != len(bottom) {
		return errorf(l, fmt.Errorf("Backward: %d propagate_down flags for %d bottoms", len(propagateDown), len(bottom)))
	}
	b := l.LayerBase()
	if b.engine == nil { // not set up on this context
		if err := chooseEngine(l); err != nil {
			return errorf(l, err)
		}
	}
	if b.fusedBy != nil && b.fusedBy() {
		return nil
	}
	if err := b.engine.Backward(top, propagateDown, bottom); err != nil {
		return errorf(l, err)
	}
	return nil
}

// SuspendFusion stops (on) or restarts (off) l computing the passes of the
// layer after it that Fuse gave it; both then run as written. A net
// suspends the fusions a partial pass (ForwardFromTo, BackwardFromTo)
// would split, as Caffe runs each layer of the range and no other.
func SuspendFusion[T Float](l Layer[T], on bool) { l.LayerBase().fusionSuspended = on }

// Reshape runs the layer's Reshape, then its engine's Reshaped: what
// Forward does first. A net's plan calls it where a pass changed what an
// engine computes in (layer.SetReduced), so that the engine chooses its
// algorithms, and says what workspace they need, before the memory plan.
func Reshape[T Float](l Layer[T], bottom, top []*blob.Blob[T]) (err error) {
	defer recoverDevice(l, &err)
	return reshape(l, bottom, top)
}

// reshape runs the layer's Reshape, then its engine's.
func reshape[T Float](l Layer[T], bottom, top []*blob.Blob[T]) error {
	if err := l.Reshape(bottom, top); err != nil {
		return err
	}
	if r := l.LayerBase().reshaper; r != nil {
		return r.Reshaped(bottom, top)
	}
	return nil
}

// recoverDevice turns the panic of a failed device copy inside a blob
// accessor into the layer's error (see device.Recover); other panics go on.
func recoverDevice[T Float](l Layer[T], err *error) {
	if e := device.PanicError(recover()); e != nil {
		*err = errorf(l, e)
	}
}

// LossBase is Base for loss layers: two bottoms (predictions and labels or
// targets), one top holding the loss, loss weight 1 by default, and no
// propagation to the labels even when backward is forced. Loss layers embed
// it instead of Base.
type LossBase[T Float] struct{ Base[T] }

func (*LossBase[T]) isLossLayer() {}

// Counts returns Caffe's LossLayer counts: 2 bottoms, 1 top, which the net
// adds (anonymous) when the layer lists none.
func (*LossBase[T]) Counts() BlobCounts {
	return BlobCounts{Bottom: Exactly(2), Top: Exactly(1), AutoTop: true}
}

// AllowForceBackward refuses the label bottom (index 1).
func (*LossBase[T]) AllowForceBackward(i int) bool { return i != 1 }
