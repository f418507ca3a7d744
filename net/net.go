// Package net builds and runs Caffe nets: a directed graph of layers
// connected by named blobs, defined by a NetParameter (a Caffe prototxt).
//
// New does what Caffe's Net::Init does: it keeps the layers the net's state
// selects (phase, level, stages), inserts Split layers where a blob feeds
// several layers, builds and sets up every layer in order, collects the
// learnable parameters (sharing those given the same ParamSpec name), and
// works out which layers need a backward pass. Nets written for older Caffe
// versions are upgraded first; package netproto holds the upgrading,
// filtering and split insertion.
//
// A Net is not safe for concurrent use.
package net

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer"
	_ "github.com/gocaffe/gocaffe/layer/all" // every layer type, for nets built from prototxt
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Float is the element type of a net's blobs.
type Float = blob.Float

// Options configures New.
type Options struct {
	// State, if not nil, replaces the NetParameter's state (phase, level,
	// stages), which selects the layers (include/exclude rules).
	State *caffepb.NetState
	// Context is the device the net runs on, handed to every layer; nil
	// runs it on the CPU.
	Context *device.Context
	// Seed seeds the layers' random number generators (weight fillers,
	// dropout); a negative seed uses the clock.
	Seed int64
	// Logger receives the net's log lines and its layers': Caffe's
	// wording, the details of building the net (every layer's shapes) at
	// slog.LevelDebug, debug_info's lines at Info, and warnings. nil means
	// slog.Default(), so a program's default logger shows the warnings and
	// hides the details unless it enables Debug;
	// slog.New(slog.DiscardHandler) silences the net.
	Logger *slog.Logger
	// SkipUnknownFields makes NewFromFile skip, with a warning each, the
	// fields of the prototxt that gocaffe's schema does not have (a Caffe
	// fork's never seen) instead of failing.
	SkipUnknownFields bool
	// NoFold keeps a TEST-phase net on the host as written: no inference
	// folding (the plan's "fold" pass, net/plan_fold.go), so that every
	// layer computes its own pass with Caffe's arithmetic.
	NoFold bool
	// NoWinograd keeps a folded net's 3x3 convolutions on im2col and
	// GEMM, where they would otherwise take Winograd's F(4x4, 3x3) at the
	// shapes where it is faster (layer.Fold.NoWinograd); their outputs
	// then differ from the unfolded net's by less.
	NoWinograd bool
	// Keep names blobs whose data and diff keep Caffe's values after each
	// pass, for a program that reads them (BlobByName) after Forward or
	// Backward. The net's outputs are always kept. The others may share
	// memory with blobs whose values are needed at other times (the plan's
	// "liveness" pass): after a pass they hold whatever was computed last
	// in that memory.
	Keep []string
	// NoMemoryReuse turns the liveness pass off: every blob keeps memory
	// of its own and its values after each pass, as in Caffe.
	NoMemoryReuse bool
	// Precision, if a 16-bit type (syncedmem.StorageFloat16 or
	// StorageBFloat16), runs every GPU layer that can compute in it so
	// (mixed precision; see the plan's "precision" pass): `gocaffe train
	// -precision fp16|bf16`. StorageNative computes as the net's NVCaffe
	// precision fields ask: the layers whose forward_type is FLOAT16 (or
	// BFLOAT16) in that type, the others in the net's own.
	Precision syncedmem.Storage
	// OwnPrecision computes every layer in the net's own type whatever
	// NVCaffe's precision fields ask (`-precision fp32` or tf32 on a net
	// written for NVCaffe's FLOAT16); Precision still applies.
	OwnPrecision bool
	// ForwardOnly says the program runs forward passes only (a test net,
	// a deploy net for classification or feature extraction): the plan
	// then reuses the memory a backward pass would read, and Backward
	// returns an error. A net none of whose layers needs a backward pass
	// is planned so anyway.
	ForwardOnly bool
}

// Net is a set of connected layers.
type Net[T Float] struct {
	name  string
	phase caffepb.Phase
	ctx   *device.Context
	log   *slog.Logger // nil: slog.Default()

	layers     []layerRecord[T] // in order, Split layers included
	layerIndex map[string]int   // the last layer of each name, as Caffe's

	blobs     []blobRecord[T] // the named blobs (the tops), in creation order
	blobIndex map[string]int

	outputIDs      []int                // the blobs no layer consumes
	params         []paramRecord[T]     // every layer's learnable blobs, in layer order
	paramNameIndex map[string]int       // the owner of each ParamSpec name
	learnable      []learnableRecord[T] // the owned params: what solvers update
	debugInfo      bool
	fused          []int                   // i: layer i computes layer i+1's passes too (layer.Fuse)
	keep           map[string]bool         // Options.Keep
	noReuse        bool                    // Options.NoMemoryReuse
	forwardOnly    bool                    // Options.ForwardOnly
	arena          *syncedmem.SyncedMemory // the liveness pass's memory, which its placed memories view
	scratch        *layer.HostScratch      // the layers' shared host scratch
	arenaLent      bool                    // arena is another net's (BorrowActivations)
	overflow       *syncedmem.SyncedMemory // the arena's part that the borrowed one does not hold
	uses           []memUse[T]             // the memories the liveness pass planned
	exchangers     []exchanger             // layers that exchange a top's memory (layer.TopDataExchanger), last first
	plan           *Plan                   // how the net executes (makePlan)
	noFold         bool                    // Options.NoFold
	noWinograd     bool                    // Options.NoWinograd
	reduced        syncedmem.Storage       // Options.Precision
	ownPrecision   bool                    // Options.OwnPrecision
	fold           *foldState[T]           // the fold pass's decision (plan_fold.go); nil: none

	afterBackward func(i int) error // SetAfterBackward; nil: none

	// NVCaffe's loss scaling fields, which a solver applies and the
	// precision pass reports.
	gradScale         float32
	gradScaleAdaptive bool
	// lossScale is the factor backward passes multiply the loss's
	// gradient by (SetLossScale; 0 and 1: none), lossView the GPU view
	// that writes it into the loss tops' diffs (lossscale.go).
	lossScale float64
	lossView  *device.GPUView[T]
}

// layerRecord is one layer of a net and its connections.
type layerRecord[T Float] struct {
	layer              layer.Layer[T]
	name               string
	bottoms, tops      []*blob.Blob[T]
	bottomIDs, topIDs  []int          // the blobs' indices in Net.blobs
	bottomNeedBackward []bool         // which bottoms get a gradient
	needBackward       bool           // whether the layer runs a backward pass
	params             []int          // its learnable blobs' indices in Net.params
	precision          precisionAsked // what NVCaffe's fields ask of it
}

// blobRecord is one named blob of a net.
type blobRecord[T Float] struct {
	blob         *blob.Blob[T]
	name         string
	needBackward bool
	lossWeight   T
}

// paramRecord is one learnable blob of one layer.
type paramRecord[T Float] struct {
	blob        *blob.Blob[T]
	layer       int // the layer's index
	index       int // the blob's index in its layer
	displayName string
	owner       int // index in Net.params of the owner, -1 for owners
	learnable   int // index in Net.learnable of the parameter it is or shares
}

// learnableRecord is a parameter a solver updates: an owner, with the
// multipliers of its ParamSpec completed by those of its sharers.
type learnableRecord[T Float] struct {
	blob            *blob.Blob[T]
	param           int // index in Net.params
	lr, decay       float32
	hasLR, hasDecay bool
}

// NewFromFile reads a net prototxt (upgrading old formats) and builds it.
func NewFromFile[T Float](path string, opts Options) (*Net[T], error) {
	p, err := netproto.ReadNetParamsFromTextFileWith(path, protoio.TextOptions{SkipUnknownFields: opts.SkipUnknownFields}, opts.Logger)
	if err != nil {
		return nil, err
	}
	n, err := New[T](p, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// New builds the net p describes (see the package documentation). p is not
// modified.
func New[T Float](p *caffepb.NetParameter, opts Options) (n *Net[T], err error) {
	p = proto.Clone(p).(*caffepb.NetParameter)
	if err := netproto.Upgrade(p, "net "+p.GetName(), opts.Logger); err != nil {
		return nil, err
	}
	if opts.State != nil {
		p.State = proto.Clone(opts.State).(*caffepb.NetState)
	}
	filtered, err := netproto.FilterNet(p)
	if err != nil {
		return nil, err
	}
	layers, err := netproto.InsertSplits(filtered)
	if err != nil {
		return nil, err
	}
	n = &Net[T]{
		name: p.GetName(), phase: p.GetState().GetPhase(), ctx: opts.Context, log: opts.Logger,
		layerIndex: map[string]int{}, blobIndex: map[string]int{}, paramNameIndex: map[string]int{},
		debugInfo: p.GetDebugInfo(), noFold: opts.NoFold, noWinograd: opts.NoWinograd, reduced: opts.Precision, ownPrecision: opts.OwnPrecision,
		keep: map[string]bool{}, noReuse: opts.NoMemoryReuse, forwardOnly: opts.ForwardOnly,
		gradScale: p.GetGlobalGradScale(), gradScaleAdaptive: p.GetGlobalGradScaleAdaptive(),
	}
	for _, name := range opts.Keep {
		n.keep[name] = true
	}
	logf.Debugf(n.log, "Initializing net %q (phase %v, %d layers)", n.name, n.phase, len(layers))
	seed := uint64(opts.Seed)
	if opts.Seed < 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := mathfn.NewRNG(seed)
	available := map[string]bool{} // blobs produced and not yet consumed: the outputs
	for id, lp := range layers {
		if err := n.addLayer(id, lp, available, rng); err != nil {
			return nil, err
		}
		n.layers[len(n.layers)-1].precision = askedPrecision(p, lp)
	}
	n.analyseBackward()
	if p.GetForceBackward() {
		n.forceBackward()
	}
	for id, b := range n.blobs {
		if available[b.name] {
			n.outputIDs = append(n.outputIDs, id)
			logf.Debugf(n.log, "This network produces output %s", b.name)
		}
	}
	if err := n.shareWeights(); err != nil {
		return nil, err
	}
	n.makePlan()
	n.logPrecision()
	for i := range n.fused {
		logf.Debugf(n.log, "%s computes %s too (fused)", n.layers[n.fused[i]].name, n.layers[n.fused[i]+1].name)
	}
	logf.Debugf(n.log, "Network initialization done.")
	return n, nil
}

// addLayer creates layer id, connects its bottoms and tops, sets it up and
// registers its parameters (Caffe's Init loop body).
func (n *Net[T]) addLayer(id int, lp *caffepb.LayerParameter, available map[string]bool, rng *rand.Rand) error {
	if lp.Phase == nil {
		lp.Phase = n.phase.Enum()
	}
	if len(lp.PropagateDown) > 0 && len(lp.PropagateDown) != len(lp.Bottom) {
		return fmt.Errorf("layer %q: propagate_down must be given either 0 or bottom_size (%d) times, got %d", lp.GetName(), len(lp.Bottom), len(lp.PropagateDown))
	}
	if earlier, dup := n.layerIndex[lp.GetName()]; dup {
		// Caffe accepts this; its name index keeps the later layer, while
		// weight files and weight sharing go to the earlier one.
		logf.Warnf(n.log, "Layers %d and %d are both named %q: LayerByName finds layer %d, weights copied from a model file or shared with another net go to layer %d (as in Caffe)",
			earlier, id, lp.GetName(), id, n.firstLayerNamed(lp.GetName()))
	}
	l, err := layer.New[T](lp)
	if err != nil {
		return err
	}
	b := l.LayerBase()
	b.SetContext(n.ctx)
	b.SetLogger(n.log)
	b.SetRNG(mathfn.NewRNG(rng.Uint64()))
	if n.scratch == nil {
		n.scratch = layer.NewHostScratch()
	}
	b.SetHostScratch(n.scratch)
	n.layers = append(n.layers, layerRecord[T]{layer: l, name: lp.GetName()})
	n.layerIndex[lp.GetName()] = id
	r := &n.layers[id]
	logf.Debugf(n.log, "Creating Layer %s", lp.GetName())

	needBackward := false
	for j, name := range lp.Bottom {
		blobID, ok := n.blobIndex[name]
		if !ok || !available[name] {
			return fmt.Errorf("layer %q: unknown bottom blob %q (bottom index %d)", lp.GetName(), name, j)
		}
		delete(available, name)
		r.bottoms = append(r.bottoms, n.blobs[blobID].blob)
		r.bottomIDs = append(r.bottomIDs, blobID)
		// An explicit propagate_down decides, even asking for a gradient
		// the blob would not otherwise get (Caffe's AppendBottom).
		need := n.blobs[blobID].needBackward
		if len(lp.PropagateDown) > 0 {
			need = lp.PropagateDown[j]
		}
		r.bottomNeedBackward = append(r.bottomNeedBackward, need)
		needBackward = needBackward || n.blobs[blobID].needBackward
	}
	for j, name := range lp.Top {
		if j < len(lp.Bottom) && lp.Bottom[j] == name && !layer.AllowsInPlace(l) {
			return fmt.Errorf("layer %q (%s) cannot compute in place: top %q is its bottom", lp.GetName(), lp.GetType(), name)
		}
		if err := n.appendTop(id, j, name, lp, available); err != nil {
			return err
		}
	}
	if c := l.Counts(); c.AutoTop && len(lp.Top) < c.Top.Min {
		logf.Warnf(n.log, "Layer %s (%s) lists %d top(s) and needs %d: the missing ones are anonymous blobs; a loss there counts in the net's loss but is not a net output (as in Caffe)",
			lp.GetName(), lp.GetType(), len(lp.Top), c.Top.Min)
		for j := len(lp.Top); j < c.Top.Min; j++ {
			n.appendAnonymousTop(id)
		}
	}
	logf.Debugf(n.log, "Setting up %s", lp.GetName())
	if err := layer.SetUp(l, r.bottoms, r.tops); err != nil {
		return err
	}
	for j, t := range r.tops {
		n.blobs[r.topIDs[j]].lossWeight = b.Loss(j)
		logf.Debugf(n.log, "Top shape: %s", t.ShapeString())
		if w := b.Loss(j); w != 0 {
			logf.Debugf(n.log, "    with loss weight %v", w)
		}
	}
	paramsNeed, err := n.addParams(id, l, lp)
	if err != nil {
		return err
	}
	needBackward = paramsNeed || needBackward
	r.needBackward = needBackward
	if needBackward {
		for _, t := range r.topIDs {
			n.blobs[t].needBackward = true
		}
	}
	return nil
}

// appendTop adds top j of layer id: a new blob, or the bottom of the same
// name for in-place computation.
func (n *Net[T]) appendTop(id, j int, name string, lp *caffepb.LayerParameter, available map[string]bool) error {
	if j < len(lp.Bottom) && lp.Bottom[j] == name {
		logf.Debugf(n.log, "%s -> %s (in-place)", lp.GetName(), name)
		n.addTop(id, n.blobIndex[name])
		available[name] = true
		return nil
	}
	if _, dup := n.blobIndex[name]; dup {
		return fmt.Errorf("layer %q: top blob %q produced by multiple sources (only in-place reuse of the same bottom is allowed)", lp.GetName(), name)
	}
	logf.Debugf(n.log, "%s -> %s", lp.GetName(), name)
	blobID := n.newBlob(name)
	n.blobIndex[name] = blobID
	n.addTop(id, blobID)
	available[name] = true
	return nil
}

// appendAnonymousTop adds a top no other layer can read.
func (n *Net[T]) appendAnonymousTop(id int) { n.addTop(id, n.newBlob("(automatic)")) }

// addTop makes blob blobID the next top of layer id.
func (n *Net[T]) addTop(id, blobID int) {
	r := &n.layers[id]
	r.tops = append(r.tops, n.blobs[blobID].blob)
	r.topIDs = append(r.topIDs, blobID)
}

func (n *Net[T]) newBlob(name string) int {
	b, _ := blob.New[T]()
	if d := n.ctx.Device(); d != nil {
		b.SetDevice(d)
	}
	n.blobs = append(n.blobs, blobRecord[T]{blob: b, name: name})
	return len(n.blobs) - 1
}

// addParams registers layer id's learnable blobs and reports whether any
// needs a gradient (lr_mult not 0). A shared parameter whose shape or
// multipliers disagree with its owner's is an error, found here, before the
// layers after it are set up, as Caffe does.
func (n *Net[T]) addParams(id int, l layer.Layer[T], lp *caffepb.LayerParameter) (bool, error) {
	b := l.LayerBase()
	// Caffe's Net::Init checks the prototxt's specs against the blobs the
	// layer made, for every layer type: a spec more is a mistake (the
	// bias's spec on a layer without bias_term, a spec meant for another
	// layer), not something to ignore.
	if len(lp.Param) > len(b.Blobs()) {
		return false, fmt.Errorf("layer %q (%s): too many params specified: %d param specs for its %d learnable blobs", lp.GetName(), lp.GetType(), len(lp.Param), len(b.Blobs()))
	}
	// The layer's own parameter copy: layers may add specs (BatchNorm).
	specs := b.Param().Param
	need := false
	for j := range b.Blobs() {
		spec := &caffepb.ParamSpec{}
		if j < len(specs) {
			spec = specs[j]
		}
		lr := spec.GetLrMult() != 0
		need = need || lr
		b.SetParamPropagateDown(j, lr)
		if err := n.appendParam(id, j, spec); err != nil {
			return false, err
		}
	}
	return need, nil
}

// appendParam registers learnable blob j of layer id, sharing it with an
// earlier blob of the same ParamSpec name.
func (n *Net[T]) appendParam(id, j int, spec *caffepb.ParamSpec) error {
	netID := len(n.params)
	name := spec.GetName()
	display := name
	if display == "" {
		display = fmt.Sprint(j)
	}
	p := paramRecord[T]{blob: n.layers[id].layer.LayerBase().Blobs()[j], layer: id, index: j, displayName: display, owner: -1}
	n.layers[id].params = append(n.layers[id].params, netID)
	owner, shared := n.paramNameIndex[name]
	if name == "" || !shared {
		if name != "" {
			n.paramNameIndex[name] = netID
		}
		p.learnable = len(n.learnable)
		n.params = append(n.params, p)
		n.learnable = append(n.learnable, learnableRecord[T]{
			blob: p.blob, param: netID,
			lr: spec.GetLrMult(), decay: spec.GetDecayMult(), hasLR: spec.LrMult != nil, hasDecay: spec.DecayMult != nil,
		})
		return nil
	}
	p.owner, p.learnable = owner, n.params[owner].learnable
	n.params = append(n.params, p)
	return n.checkSharedParam(netID, owner, spec)
}

// checkSharedParam checks that parameter i may share owner's memory: the
// same shape for STRICT sharing, the same count for PERMISSIVE, and
// multipliers that agree.
func (n *Net[T]) checkSharedParam(i, owner int, spec *caffepb.ParamSpec) error {
	ref, oref := n.params[i], n.params[owner]
	layerName, ownerName := n.layers[ref.layer].name, n.layers[oref.layer].name
	this, own := ref.blob, oref.blob
	logf.Debugf(n.log, "Sharing parameters '%s' owned by layer '%s', param index %d", spec.GetName(), ownerName, oref.index)
	if spec.GetShareMode() == caffepb.ParamSpec_PERMISSIVE {
		if this.Count() != own.Count() {
			return fmt.Errorf("layer %q: shared parameter %q has count %d, the owner's (layer %q) is %d", layerName, spec.GetName(), this.Count(), ownerName, own.Count())
		}
	} else if !this.SameShape(own) {
		return fmt.Errorf("layer %q: shared parameter %q has shape %s, the owner's (layer %q) is %s; use share_mode PERMISSIVE to share by count",
			layerName, spec.GetName(), this.ShapeString(), ownerName, own.ShapeString())
	}
	l := &n.learnable[ref.learnable]
	if err := mergeMult(&l.lr, &l.hasLR, spec.LrMult, "lr_mult", layerName, spec.GetName()); err != nil {
		return err
	}
	return mergeMult(&l.decay, &l.hasDecay, spec.DecayMult, "decay_mult", layerName, spec.GetName())
}

// shareWeights makes every sharing parameter use its owner's memory (the
// shapes were checked as each layer was added).
func (n *Net[T]) shareWeights() error {
	for _, p := range n.params {
		if p.owner < 0 {
			continue
		}
		this, own := p.blob, n.params[p.owner].blob
		if err := this.ShareData(own); err != nil {
			return err
		}
		if err := this.ShareDiff(own); err != nil {
			return err
		}
	}
	return nil
}

// mergeMult applies a sharer's multiplier: it must equal the owner's if
// both are set; a sharer's setting fills in an owner's default.
func mergeMult(owner *float32, ownerSet *bool, sharer *float32, what, layerName, param string) error {
	if sharer == nil {
		return nil
	}
	if *ownerSet && *owner != *sharer {
		return fmt.Errorf("layer %q: shared param %q has mismatched %s: %v, the owner's is %v", layerName, param, what, *sharer, *owner)
	}
	*owner, *ownerSet = *sharer, true
	return nil
}

// analyseBackward walks the net backwards and switches off backward for
// layers that do not contribute to a loss, and for layers none of whose
// bottoms need a gradient (Caffe's second Init pass).
func (n *Net[T]) analyseBackward() {
	underLoss := map[int]bool{}
	skipBackprop := map[int]bool{}
	for id := len(n.layers) - 1; id >= 0; id-- {
		r := &n.layers[id]
		contributes, skip := false, true
		for j, t := range r.topIDs {
			if r.layer.LayerBase().Loss(j) != 0 || underLoss[t] {
				contributes = true
			}
			if !skipBackprop[t] {
				skip = false
			}
		}
		if r.needBackward && skip {
			r.needBackward = false
			clear(r.bottomNeedBackward)
		}
		if !contributes {
			r.needBackward = false
		}
		if r.needBackward {
			logf.Debugf(n.log, "%s needs backward computation.", r.name)
		} else {
			logf.Debugf(n.log, "%s does not need backward computation.", r.name)
		}
		for j, b := range r.bottomIDs {
			if contributes {
				underLoss[b] = true
			} else {
				r.bottomNeedBackward[j] = false
			}
			if !r.bottomNeedBackward[j] {
				skipBackprop[b] = true
			}
		}
	}
}

// forceBackward makes every layer compute every gradient it can
// (NetParameter.force_backward).
func (n *Net[T]) forceBackward() {
	for id := range n.layers {
		r := &n.layers[id]
		r.needBackward = true
		for j, b := range r.bottomIDs {
			r.bottomNeedBackward[j] = r.bottomNeedBackward[j] || layer.AllowForceBackward(r.layer, j)
			n.blobs[b].needBackward = n.blobs[b].needBackward || r.bottomNeedBackward[j]
		}
		for j := range r.layer.LayerBase().Blobs() {
			r.layer.LayerBase().SetParamPropagateDown(j, true)
		}
	}
}

// ForwardFromTo runs the forward pass of layers start to end (inclusive, as
// Caffe) and returns the sum of their weighted losses.
func (n *Net[T]) ForwardFromTo(start, end int) (T, error) {
	if start < 0 || end >= len(n.layers) || start > end+1 {
		return 0, fmt.Errorf("net %q: ForwardFromTo(%d, %d) with %d layers", n.name, start, end, len(n.layers))
	}
	n.suspendSplitFusions(start, end, true)
	defer n.suspendSplitFusions(start, end, false)
	if err := n.foldBefore(start, end); err != nil {
		return 0, err
	}
	defer n.foldAfter(start, end)
	if err := n.PrepareForward(start, end); err != nil {
		return 0, err
	}
	var loss T
	for i := start; i <= end; i++ {
		r := &n.layers[i]
		if n.foldRemoved(i) {
			if err := r.layer.Reshape(r.bottoms, r.tops); err != nil {
				return 0, fmt.Errorf("layer %q (%s): %w", r.name, r.layer.Type(), err)
			}
			continue
		}
		l, err := layer.Forward(r.layer, r.bottoms, r.tops)
		if err != nil {
			return 0, err
		}
		loss += l
		if n.debugInfo {
			n.forwardDebugInfo(i)
		}
	}
	return loss, nil
}

// suspendSplitFusions suspends (on) or resumes the fusions of the pairs
// of layers that the range lo..hi takes one of (layer.SuspendFusion), so
// that each layer of the range computes its own pass and no other. It
// allocates nothing: the training loop calls it every pass.
func (n *Net[T]) suspendSplitFusions(lo, hi int, on bool) {
	for _, i := range n.fused {
		if i == hi || i+1 == lo {
			layer.SuspendFusion(n.layers[i].layer, on)
		}
	}
}

// Forward runs the whole net forward and returns the loss.
func (n *Net[T]) Forward() (T, error) { return n.ForwardFromTo(0, len(n.layers)-1) }

// BackwardFromTo runs the backward pass of layers start down to end
// (inclusive), skipping those that need no backward. With a loss scale
// (SetLossScale) the loss tops of those layers start the pass from their
// loss weight times the scale.
func (n *Net[T]) BackwardFromTo(start, end int) (err error) {
	if end < 0 || start >= len(n.layers) {
		return fmt.Errorf("net %q: BackwardFromTo(%d, %d) with %d layers", n.name, start, end, len(n.layers))
	}
	if n.forwardOnly {
		return fmt.Errorf("net %q: %w", n.name, errForwardOnly)
	}
	n.suspendSplitFusions(end, start, true)
	defer n.suspendSplitFusions(end, start, false)
	if s := n.LossScale(); s != 1 {
		if err := n.scaleLossDiffs(end, start, s); err != nil {
			return err
		}
		// Restored even after a failed pass, so that the next Forward's
		// loss reads the weights again.
		defer func() {
			if rerr := n.scaleLossDiffs(end, start, 1); err == nil {
				err = rerr
			}
		}()
	}
	for i := start; i >= end; i-- {
		if err := n.backwardLayer(i); err != nil {
			return err
		}
		if n.afterBackward != nil {
			if err := n.afterBackward(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetAfterBackward sets f, which BackwardFromTo calls after the backward
// pass of each layer it walks (whether or not the layer needed one), with
// the layer's index; nil removes it. From the call for layer i on, the
// gradients that layers i and above add to are complete
// (LearnableParamsDoneAfter): a data-parallel job starts reducing them
// there while the layers below run their backward passes. An error from
// f ends the backward pass with it.
func (n *Net[T]) SetAfterBackward(f func(i int) error) { n.afterBackward = f }

// LearnableParamsDoneAfter returns, for each of LearnableParams, the index
// of the lowest layer holding it (its owner or a layer sharing it), or of
// the layer that computes that layer's backward pass with its own (a
// Scale fused into the BatchNorm before it): once the backward passes
// have come down to that layer, nothing adds to its gradient in this pass.
func (n *Net[T]) LearnableParamsDoneAfter() []int {
	fusedInto := make(map[int]bool, len(n.fused))
	for _, i := range n.fused {
		fusedInto[i+1] = true
	}
	done := make([]int, len(n.learnable))
	for i := range done {
		done[i] = len(n.layers)
	}
	for _, p := range n.params {
		l := p.layer
		for fusedInto[l] {
			l--
		}
		done[p.learnable] = min(done[p.learnable], l)
	}
	return done
}

// backwardLayer runs layer i's backward pass, if it needs one.
func (n *Net[T]) backwardLayer(i int) error {
	r := &n.layers[i]
	if !r.needBackward {
		return nil
	}
	if err := layer.Backward(r.layer, r.tops, r.bottomNeedBackward, r.bottoms); err != nil {
		return err
	}
	if n.debugInfo {
		n.backwardDebugInfo(i)
	}
	return nil
}

// Backward runs the whole net backward.
func (n *Net[T]) Backward() error { return n.BackwardFromTo(len(n.layers)-1, 0) }

// ForwardBackward runs a forward and a backward pass and returns the loss.
func (n *Net[T]) ForwardBackward() (T, error) {
	loss, err := n.Forward()
	if err != nil {
		return 0, err
	}
	return loss, n.Backward()
}

// RecordableFrom returns the index of the first layer of the part of the
// net that a CUDA graph may record and replay: every layer after the
// leading ones without bottoms (the data layers, which must run on the
// host before each replay). The error says why there is no such part: a
// layer that computes on the host or is not known to replay faithfully
// (layer.Recordable, as the plan's cuda-graph pass found), debug_info
// (which reads every blob back), or nothing after the data layers.
func (n *Net[T]) RecordableFrom() (int, error) {
	if n.debugInfo {
		return 0, fmt.Errorf("net %q: debug_info reads every blob back after each layer", n.name)
	}
	start := n.SourceLayers()
	if start == len(n.layers) {
		return 0, fmt.Errorf("net %q: no layer after the data layers", n.name)
	}
	for _, l := range n.plan.Layers[start:] { // the plan's cuda-graph pass
		if l.Graph != "" {
			return 0, fmt.Errorf("net %q: %s", n.name, l.Graph)
		}
	}
	return start, nil
}

// SourceLayers returns the number of leading layers without bottoms: the
// data layers, which a CUDA graph leaves to the host.
func (n *Net[T]) SourceLayers() int {
	k := 0
	for k < len(n.layers) && len(n.layers[k].bottoms) == 0 {
		k++
	}
	return k
}

// ForwardBackwardOnDevice runs the forward passes of layers start to the
// last, then the backward passes back down to start, adding the weighted
// losses to the first element of acc's device data (layer.ForwardOnDevice):
// the part of a training iteration that waits for nothing, for a CUDA
// graph to record. acc is not cleared first.
func (n *Net[T]) ForwardBackwardOnDevice(start int, acc *blob.Blob[T]) error {
	last := len(n.layers) - 1
	if start < 0 || start > last {
		return fmt.Errorf("net %q: ForwardBackwardOnDevice(%d) with %d layers", n.name, start, len(n.layers))
	}
	n.suspendSplitFusions(start, last, true)
	defer n.suspendSplitFusions(start, last, false)
	if err := n.PrepareForward(start, last); err != nil {
		return err
	}
	for i := start; i <= last; i++ {
		r := &n.layers[i]
		if err := layer.ForwardOnDevice(r.layer, r.bottoms, r.tops, acc); err != nil {
			return err
		}
	}
	return n.BackwardFromTo(last, start)
}

// ExplainNaN asks the net's layers why the last forward pass's loss was
// NaN (layer.ExplainNaN) and returns the first answer, nil when no layer
// answers.
func (n *Net[T]) ExplainNaN() error {
	for _, r := range n.layers {
		if err := layer.ExplainNaN(r.layer); err != nil {
			return err
		}
	}
	return nil
}

// Reshape reshapes every layer for its bottoms' current shapes (after an
// input blob changed shape).
func (n *Net[T]) Reshape() error {
	for _, r := range n.layers {
		if err := r.layer.Reshape(r.bottoms, r.tops); err != nil {
			return fmt.Errorf("layer %q (%s): %w", r.name, r.layer.Type(), err)
		}
	}
	return nil
}

// ClearParamDiffs zeroes the diffs of the learnable parameters, on the
// device they live on.
func (n *Net[T]) ClearParamDiffs() error {
	for _, p := range n.learnable {
		if err := zeroDiff(p.blob, n); err != nil {
			return err
		}
	}
	return nil
}

// Update applies data -= diff to every learnable parameter.
func (n *Net[T]) Update() (err error) {
	defer device.Recover(&err)
	for _, p := range n.learnable {
		p.blob.Update()
	}
	return nil
}

// Name returns the net's name.
func (n *Net[T]) Name() string { return n.name }

// Phase returns the phase the net was built for.
func (n *Net[T]) Phase() caffepb.Phase { return n.phase }

// Context returns the device context the net runs on, nil for the CPU.
func (n *Net[T]) Context() *device.Context { return n.ctx }

// Layers returns the layers in order (Split layers included), in a new
// slice.
func (n *Net[T]) Layers() []layer.Layer[T] {
	return collect(n.layers, func(r layerRecord[T]) layer.Layer[T] { return r.layer })
}

// LayerNames returns the layers' names, in order, in a new slice.
func (n *Net[T]) LayerNames() []string {
	return collect(n.layers, func(r layerRecord[T]) string { return r.name })
}

// LayerByName returns the named layer, or nil. Of several layers of one
// name it returns the last, as Caffe's layer_by_name.
func (n *Net[T]) LayerByName(name string) layer.Layer[T] {
	if i, ok := n.layerIndex[name]; ok {
		return n.layers[i].layer
	}
	return nil
}

// Blobs returns every named blob (tops), in creation order, in a new slice.
func (n *Net[T]) Blobs() []*blob.Blob[T] {
	return collect(n.blobs, func(r blobRecord[T]) *blob.Blob[T] { return r.blob })
}

// BlobNames returns the blobs' names, in a new slice.
func (n *Net[T]) BlobNames() []string {
	return collect(n.blobs, func(r blobRecord[T]) string { return r.name })
}

// BlobByName returns the named blob, or nil.
func (n *Net[T]) BlobByName(name string) *blob.Blob[T] {
	if i, ok := n.blobIndex[name]; ok {
		return n.blobs[i].blob
	}
	return nil
}

// firstLayerNamed returns the index of the first layer of that name, or -1:
// the layer Caffe's CopyTrainedLayersFrom and ShareTrainedLayersWith pick.
func (n *Net[T]) firstLayerNamed(name string) int {
	return slices.IndexFunc(n.layers, func(r layerRecord[T]) bool { return r.name == name })
}

// Bottoms returns layer i's bottom blobs, in a new slice.
func (n *Net[T]) Bottoms(i int) []*blob.Blob[T] { return slices.Clone(n.layers[i].bottoms) }

// Tops returns layer i's top blobs, in a new slice.
func (n *Net[T]) Tops(i int) []*blob.Blob[T] { return slices.Clone(n.layers[i].tops) }

// BottomNeedBackward returns which of layer i's bottoms get a gradient, in
// a new slice.
func (n *Net[T]) BottomNeedBackward(i int) []bool {
	return slices.Clone(n.layers[i].bottomNeedBackward)
}

// LayerNeedBackward reports whether layer i runs a backward pass.
func (n *Net[T]) LayerNeedBackward(i int) bool { return n.layers[i].needBackward }

// BlobLossWeight returns the loss weight of blob i (0 for non-loss blobs).
func (n *Net[T]) BlobLossWeight(i int) T { return n.blobs[i].lossWeight }

// OutputBlobs returns the blobs no layer consumes, the net's outputs, in a
// new slice.
func (n *Net[T]) OutputBlobs() []*blob.Blob[T] {
	return collect(n.outputIDs, func(id int) *blob.Blob[T] { return n.blobs[id].blob })
}

// OutputLossWeight returns the loss weight of output blob j.
func (n *Net[T]) OutputLossWeight(j int) T { return n.blobs[n.outputIDs[j]].lossWeight }

// Reseed restarts every layer's random number generator from a seed
// derived from seed and the layer's index (see layer.Base.Reseed). It
// allocates nothing.
func (n *Net[T]) Reseed(seed uint64) { n.ReseedFrom(0, seed) }

// ReseedFrom is Reseed for the layers from start on; the others keep
// their generators.
func (n *Net[T]) ReseedFrom(start int, seed uint64) {
	for i := max(start, 0); i < len(n.layers); i++ {
		n.layers[i].layer.LayerBase().Reseed(mix64(seed + uint64(i)*0x9e3779b97f4a7c15))
	}
}

// mix64 is SplitMix64's finaliser: nearby seeds give unrelated streams.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// OutputBlobNames returns the names of the output blobs, in a new slice.
func (n *Net[T]) OutputBlobNames() []string {
	return collect(n.outputIDs, func(id int) string { return n.blobs[id].name })
}

// Params returns every layer's learnable blobs in layer order, in a new
// slice; shared ones appear once per layer using them.
func (n *Net[T]) Params() []*blob.Blob[T] {
	return collect(n.params, func(p paramRecord[T]) *blob.Blob[T] { return p.blob })
}

// LearnableParams returns the parameters a solver updates, each shared
// parameter once, at its owner, in a new slice. Graph().LearnableParams()
// reaches them without allocating.
func (n *Net[T]) LearnableParams() []*blob.Blob[T] {
	return collect(n.learnable, func(l learnableRecord[T]) *blob.Blob[T] { return l.blob })
}

// ParamsLR returns each learnable parameter's lr_mult, in a new slice.
func (n *Net[T]) ParamsLR() []float32 {
	return collect(n.learnable, func(l learnableRecord[T]) float32 { return l.lr })
}

// ParamsWeightDecay returns each learnable parameter's decay_mult, in a
// new slice.
func (n *Net[T]) ParamsWeightDecay() []float32 {
	return collect(n.learnable, func(l learnableRecord[T]) float32 { return l.decay })
}

// ParamOwners returns, for each entry of Params, the index of the entry
// owning its memory, or -1 for owners, in a new slice.
func (n *Net[T]) ParamOwners() []int {
	return collect(n.params, func(p paramRecord[T]) int { return p.owner })
}

// ParamDisplayNames returns each entry of Params' ParamSpec name, or its
// index in its layer when unnamed, in a new slice.
func (n *Net[T]) ParamDisplayNames() []string {
	return collect(n.params, func(p paramRecord[T]) string { return p.displayName })
}

// collect returns f of each element of s, in a new slice: what the
// accessors hand out instead of the net's own records.
func collect[E, V any](s []E, f func(E) V) []V {
	out := make([]V, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

// Close releases what the net holds outside Go's heap: it stops and closes
// the layers that own resources (data layers' prefetch goroutines and
// databases) and frees the activation blobs' device memory. Learnable
// parameters are left to the garbage collector's cleanup, because a test
// net shares them with its train net (ShareTrainedLayersWith) and freeing
// them here would pull them from under the other. Close is safe to call
// twice.
func (n *Net[T]) Close() error {
	var errs []error
	for _, r := range n.layers {
		if c, ok := r.layer.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("layer %q: %w", r.name, err))
			}
		}
		// An engine's own device memory (a 16-bit engine's weight copies).
		if c, ok := r.layer.LayerBase().Engine().(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("layer %q's engine: %w", r.name, err))
			}
		}
	}
	if n.ctx.OnGPU() {
		for _, b := range n.blobs {
			errs = append(errs, b.blob.Close())
		}
		if n.arena != nil && !n.arenaLent { // the placed memories are views of it
			errs = append(errs, n.arena.Close())
		}
		if n.overflow != nil {
			errs = append(errs, n.overflow.Close())
		}
	}
	return errors.Join(errs...)
}
