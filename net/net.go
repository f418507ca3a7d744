// Package net builds and runs Caffe nets: a directed graph of layers
// connected by named blobs, defined by a NetParameter (a Caffe prototxt).
//
// New does what Caffe's Net::Init does: it keeps the layers the net's state
// selects (phase, level, stages), inserts Split layers where a blob feeds
// several layers, builds and sets up every layer in order, collects the
// learnable parameters (sharing those given the same ParamSpec name), and
// works out which layers need a backward pass. Nets written for older Caffe
// versions are upgraded first (see Upgrade).
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
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
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
}

// Net is a set of connected layers.
type Net[T Float] struct {
	name  string
	phase caffepb.Phase
	ctx   *device.Context
	log   *slog.Logger // nil: slog.Default()

	layers     []layer.Layer[T]
	layerNames []string
	layerIndex map[string]int

	blobs     []*blob.Blob[T]
	blobNames []string
	blobIndex map[string]int

	bottoms, tops             [][]*blob.Blob[T]
	bottomIDs, topIDs         [][]int
	bottomNeedBackward        [][]bool
	layerNeedBackward         []bool
	blobNeedBackward          []bool
	blobLossWeights           []T
	outputIDs                 []int
	params                    []*blob.Blob[T] // every layer's learnable blobs, in layer order
	paramOwners               []int           // index in params of the owner, -1 for owners
	paramLayers               []paramRef      // the layer and blob index of each param
	paramDisplayNames         []string
	paramNameIndex            map[string]int
	learnableParams           []*blob.Blob[T] // the owned params: what solvers update
	learnableIDs              []int           // for each param, its learnable param
	paramsLR, paramsDecay     []float32
	hasParamsLR, hasParamsDec []bool
	debugInfo                 bool
}

type paramRef struct{ layer, param int }

// NewFromFile reads a net prototxt (upgrading old formats) and builds it.
func NewFromFile[T Float](path string, opts Options) (*Net[T], error) {
	p, err := ReadNetParamsFromTextFile(path, opts.Logger)
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
	if err := Upgrade(p, "net "+p.GetName(), opts.Logger); err != nil {
		return nil, err
	}
	if opts.State != nil {
		p.State = proto.Clone(opts.State).(*caffepb.NetState)
	}
	filtered, err := FilterNet(p)
	if err != nil {
		return nil, err
	}
	layers, err := InsertSplits(filtered)
	if err != nil {
		return nil, err
	}
	n = &Net[T]{
		name: p.GetName(), phase: p.GetState().GetPhase(), ctx: opts.Context, log: opts.Logger,
		layerIndex: map[string]int{}, blobIndex: map[string]int{}, paramNameIndex: map[string]int{},
		debugInfo: p.GetDebugInfo(),
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
	}
	n.analyseBackward()
	if p.GetForceBackward() {
		n.forceBackward()
	}
	for id := range n.blobs {
		if available[n.blobNames[id]] {
			n.outputIDs = append(n.outputIDs, id)
			logf.Debugf(n.log, "This network produces output %s", n.blobNames[id])
		}
	}
	if err := n.shareWeights(); err != nil {
		return nil, err
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
	n.layers = append(n.layers, l)
	n.layerNames = append(n.layerNames, lp.GetName())
	n.layerIndex[lp.GetName()] = id
	n.bottoms, n.tops = append(n.bottoms, nil), append(n.tops, nil)
	n.bottomIDs, n.topIDs = append(n.bottomIDs, nil), append(n.topIDs, nil)
	n.bottomNeedBackward = append(n.bottomNeedBackward, nil)
	logf.Debugf(n.log, "Creating Layer %s", lp.GetName())

	needBackward := false
	for j, name := range lp.Bottom {
		blobID, ok := n.blobIndex[name]
		if !ok || !available[name] {
			return fmt.Errorf("layer %q: unknown bottom blob %q (bottom index %d)", lp.GetName(), name, j)
		}
		delete(available, name)
		n.bottoms[id] = append(n.bottoms[id], n.blobs[blobID])
		n.bottomIDs[id] = append(n.bottomIDs[id], blobID)
		// An explicit propagate_down decides, even asking for a gradient
		// the blob would not otherwise get (Caffe's AppendBottom).
		need := n.blobNeedBackward[blobID]
		if len(lp.PropagateDown) > 0 {
			need = lp.PropagateDown[j]
		}
		n.bottomNeedBackward[id] = append(n.bottomNeedBackward[id], need)
		needBackward = needBackward || n.blobNeedBackward[blobID]
	}
	for j, name := range lp.Top {
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
	if err := layer.SetUp(l, n.bottoms[id], n.tops[id]); err != nil {
		return err
	}
	for j, t := range n.tops[id] {
		blobID := n.topIDs[id][j]
		n.blobLossWeights[blobID] = b.Loss(j)
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
	n.layerNeedBackward = append(n.layerNeedBackward, needBackward)
	if needBackward {
		for _, t := range n.topIDs[id] {
			n.blobNeedBackward[t] = true
		}
	}
	return nil
}

// appendTop adds top j of layer id: a new blob, or the bottom of the same
// name for in-place computation.
func (n *Net[T]) appendTop(id, j int, name string, lp *caffepb.LayerParameter, available map[string]bool) error {
	if j < len(lp.Bottom) && lp.Bottom[j] == name {
		blobID := n.blobIndex[name]
		logf.Debugf(n.log, "%s -> %s (in-place)", lp.GetName(), name)
		n.tops[id] = append(n.tops[id], n.blobs[blobID])
		n.topIDs[id] = append(n.topIDs[id], blobID)
		available[name] = true
		return nil
	}
	if _, dup := n.blobIndex[name]; dup {
		return fmt.Errorf("layer %q: top blob %q produced by multiple sources (only in-place reuse of the same bottom is allowed)", lp.GetName(), name)
	}
	logf.Debugf(n.log, "%s -> %s", lp.GetName(), name)
	blobID := n.newBlob(name)
	n.blobIndex[name] = blobID
	n.tops[id] = append(n.tops[id], n.blobs[blobID])
	n.topIDs[id] = append(n.topIDs[id], blobID)
	available[name] = true
	return nil
}

// appendAnonymousTop adds a top no other layer can read.
func (n *Net[T]) appendAnonymousTop(id int) {
	blobID := n.newBlob("(automatic)")
	n.tops[id] = append(n.tops[id], n.blobs[blobID])
	n.topIDs[id] = append(n.topIDs[id], blobID)
}

func (n *Net[T]) newBlob(name string) int {
	b, _ := blob.New[T]()
	if d := n.ctx.Device(); d != nil {
		b.SetDevice(d)
	}
	n.blobs = append(n.blobs, b)
	n.blobNames = append(n.blobNames, name)
	n.blobNeedBackward = append(n.blobNeedBackward, false)
	n.blobLossWeights = append(n.blobLossWeights, 0)
	return len(n.blobs) - 1
}

// addParams registers layer id's learnable blobs and reports whether any
// needs a gradient (lr_mult not 0). A shared parameter whose shape or
// multipliers disagree with its owner's is an error, found here, before the
// layers after it are set up, as Caffe does.
func (n *Net[T]) addParams(id int, l layer.Layer[T], lp *caffepb.LayerParameter) (bool, error) {
	b := l.LayerBase()
	// The layer's own parameter copy: layers may add specs (BatchNorm).
	specs := b.Param().Param
	if len(specs) > len(b.Blobs()) {
		logf.Warnf(n.log, "Layer %s has %d param specs for %d learnable blobs; the extra ones are ignored", lp.GetName(), len(specs), len(b.Blobs()))
	}
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
	n.params = append(n.params, n.layers[id].LayerBase().Blobs()[j])
	n.paramLayers = append(n.paramLayers, paramRef{id, j})
	name := spec.GetName()
	display := name
	if display == "" {
		display = fmt.Sprint(j)
	}
	n.paramDisplayNames = append(n.paramDisplayNames, display)
	owner, shared := n.paramNameIndex[name]
	if name == "" || !shared {
		if name != "" {
			n.paramNameIndex[name] = netID
		}
		n.paramOwners = append(n.paramOwners, -1)
		n.learnableIDs = append(n.learnableIDs, len(n.learnableParams))
		n.learnableParams = append(n.learnableParams, n.params[netID])
		n.hasParamsLR = append(n.hasParamsLR, spec.LrMult != nil)
		n.hasParamsDec = append(n.hasParamsDec, spec.DecayMult != nil)
		n.paramsLR = append(n.paramsLR, spec.GetLrMult())
		n.paramsDecay = append(n.paramsDecay, spec.GetDecayMult())
		return nil
	}
	n.paramOwners = append(n.paramOwners, owner)
	n.learnableIDs = append(n.learnableIDs, n.learnableIDs[owner])
	return n.checkSharedParam(netID, owner, spec)
}

// checkSharedParam checks that parameter i may share owner's memory: the
// same shape for STRICT sharing, the same count for PERMISSIVE, and
// multipliers that agree.
func (n *Net[T]) checkSharedParam(i, owner int, spec *caffepb.ParamSpec) error {
	ref, oref := n.paramLayers[i], n.paramLayers[owner]
	layerName, ownerName := n.layerNames[ref.layer], n.layerNames[oref.layer]
	this, own := n.params[i], n.params[owner]
	logf.Debugf(n.log, "Sharing parameters '%s' owned by layer '%s', param index %d", spec.GetName(), ownerName, oref.param)
	if spec.GetShareMode() == caffepb.ParamSpec_PERMISSIVE {
		if this.Count() != own.Count() {
			return fmt.Errorf("layer %q: shared parameter %q has count %d, the owner's (layer %q) is %d", layerName, spec.GetName(), this.Count(), ownerName, own.Count())
		}
	} else if !this.SameShape(own) {
		return fmt.Errorf("layer %q: shared parameter %q has shape %s, the owner's (layer %q) is %s; use share_mode PERMISSIVE to share by count",
			layerName, spec.GetName(), this.ShapeString(), ownerName, own.ShapeString())
	}
	lid := n.learnableIDs[i]
	if err := mergeMult(&n.paramsLR[lid], &n.hasParamsLR[lid], spec.LrMult, "lr_mult", layerName, spec.GetName()); err != nil {
		return err
	}
	return mergeMult(&n.paramsDecay[lid], &n.hasParamsDec[lid], spec.DecayMult, "decay_mult", layerName, spec.GetName())
}

// shareWeights makes every sharing parameter use its owner's memory (the
// shapes were checked as each layer was added).
func (n *Net[T]) shareWeights() error {
	for i, owner := range n.paramOwners {
		if owner < 0 {
			continue
		}
		this, own := n.params[i], n.params[owner]
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
		contributes, skip := false, true
		for j, t := range n.topIDs[id] {
			if n.layers[id].LayerBase().Loss(j) != 0 || underLoss[t] {
				contributes = true
			}
			if !skipBackprop[t] {
				skip = false
			}
		}
		if n.layerNeedBackward[id] && skip {
			n.layerNeedBackward[id] = false
			for j := range n.bottomNeedBackward[id] {
				n.bottomNeedBackward[id][j] = false
			}
		}
		if !contributes {
			n.layerNeedBackward[id] = false
		}
		if n.layerNeedBackward[id] {
			logf.Debugf(n.log, "%s needs backward computation.", n.layerNames[id])
		} else {
			logf.Debugf(n.log, "%s does not need backward computation.", n.layerNames[id])
		}
		for j, b := range n.bottomIDs[id] {
			if contributes {
				underLoss[b] = true
			} else {
				n.bottomNeedBackward[id][j] = false
			}
			if !n.bottomNeedBackward[id][j] {
				skipBackprop[b] = true
			}
		}
	}
}

// forceBackward makes every layer compute every gradient it can
// (NetParameter.force_backward).
func (n *Net[T]) forceBackward() {
	for id, l := range n.layers {
		n.layerNeedBackward[id] = true
		for j, b := range n.bottomIDs[id] {
			n.bottomNeedBackward[id][j] = n.bottomNeedBackward[id][j] || layer.AllowForceBackward(l, j)
			n.blobNeedBackward[b] = n.blobNeedBackward[b] || n.bottomNeedBackward[id][j]
		}
		for j := range l.LayerBase().Blobs() {
			l.LayerBase().SetParamPropagateDown(j, true)
		}
	}
}

// ForwardFromTo runs the forward pass of layers start to end (inclusive, as
// Caffe) and returns the sum of their weighted losses.
func (n *Net[T]) ForwardFromTo(start, end int) (T, error) {
	if start < 0 || end >= len(n.layers) || start > end+1 {
		return 0, fmt.Errorf("net %q: ForwardFromTo(%d, %d) with %d layers", n.name, start, end, len(n.layers))
	}
	var loss T
	for i := start; i <= end; i++ {
		l, err := layer.Forward(n.layers[i], n.bottoms[i], n.tops[i])
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

// Forward runs the whole net forward and returns the loss.
func (n *Net[T]) Forward() (T, error) { return n.ForwardFromTo(0, len(n.layers)-1) }

// BackwardFromTo runs the backward pass of layers start down to end
// (inclusive), skipping those that need no backward.
func (n *Net[T]) BackwardFromTo(start, end int) error {
	if end < 0 || start >= len(n.layers) {
		return fmt.Errorf("net %q: BackwardFromTo(%d, %d) with %d layers", n.name, start, end, len(n.layers))
	}
	for i := start; i >= end; i-- {
		if !n.layerNeedBackward[i] {
			continue
		}
		if err := layer.Backward(n.layers[i], n.tops[i], n.bottomNeedBackward[i], n.bottoms[i]); err != nil {
			return err
		}
		if n.debugInfo {
			n.backwardDebugInfo(i)
		}
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

// Reshape reshapes every layer for its bottoms' current shapes (after an
// input blob changed shape).
func (n *Net[T]) Reshape() error {
	for i, l := range n.layers {
		if err := l.Reshape(n.bottoms[i], n.tops[i]); err != nil {
			return fmt.Errorf("layer %q (%s): %w", n.layerNames[i], l.Type(), err)
		}
	}
	return nil
}

// ClearParamDiffs zeroes the diffs of the learnable parameters, on the
// device they live on.
func (n *Net[T]) ClearParamDiffs() error {
	for _, p := range n.learnableParams {
		if err := zeroDiff(p, n); err != nil {
			return err
		}
	}
	return nil
}

// Update applies data -= diff to every learnable parameter.
func (n *Net[T]) Update() (err error) {
	defer device.Recover(&err)
	for _, p := range n.learnableParams {
		p.Update()
	}
	return nil
}

// Name returns the net's name.
func (n *Net[T]) Name() string { return n.name }

// Phase returns the phase the net was built for.
func (n *Net[T]) Phase() caffepb.Phase { return n.phase }

// Context returns the device context the net runs on, nil for the CPU.
func (n *Net[T]) Context() *device.Context { return n.ctx }

// Layers returns the layers in order (Split layers included).
func (n *Net[T]) Layers() []layer.Layer[T] { return n.layers }

// LayerNames returns the layers' names, in order.
func (n *Net[T]) LayerNames() []string { return n.layerNames }

// LayerByName returns the named layer, or nil. Of several layers of one
// name it returns the last, as Caffe's layer_by_name.
func (n *Net[T]) LayerByName(name string) layer.Layer[T] {
	if i, ok := n.layerIndex[name]; ok {
		return n.layers[i]
	}
	return nil
}

// Blobs returns every named blob (tops), in creation order.
func (n *Net[T]) Blobs() []*blob.Blob[T] { return n.blobs }

// BlobNames returns the blobs' names.
func (n *Net[T]) BlobNames() []string { return n.blobNames }

// BlobByName returns the named blob, or nil.
func (n *Net[T]) BlobByName(name string) *blob.Blob[T] {
	if i, ok := n.blobIndex[name]; ok {
		return n.blobs[i]
	}
	return nil
}

// firstLayerNamed returns the index of the first layer of that name, or -1:
// the layer Caffe's CopyTrainedLayersFrom and ShareTrainedLayersWith pick.
func (n *Net[T]) firstLayerNamed(name string) int {
	return slices.Index(n.layerNames, name)
}

// Bottoms returns layer i's bottom blobs.
func (n *Net[T]) Bottoms(i int) []*blob.Blob[T] { return n.bottoms[i] }

// Tops returns layer i's top blobs.
func (n *Net[T]) Tops(i int) []*blob.Blob[T] { return n.tops[i] }

// BottomNeedBackward returns which of layer i's bottoms get a gradient.
func (n *Net[T]) BottomNeedBackward(i int) []bool { return n.bottomNeedBackward[i] }

// LayerNeedBackward reports whether layer i runs a backward pass.
func (n *Net[T]) LayerNeedBackward(i int) bool { return n.layerNeedBackward[i] }

// BlobLossWeight returns the loss weight of blob i (0 for non-loss blobs).
func (n *Net[T]) BlobLossWeight(i int) T { return n.blobLossWeights[i] }

// OutputBlobs returns the blobs no layer consumes: the net's outputs.
func (n *Net[T]) OutputBlobs() []*blob.Blob[T] {
	out := make([]*blob.Blob[T], len(n.outputIDs))
	for i, id := range n.outputIDs {
		out[i] = n.blobs[id]
	}
	return out
}

// OutputLossWeight returns the loss weight of output blob j.
func (n *Net[T]) OutputLossWeight(j int) T { return n.blobLossWeights[n.outputIDs[j]] }

// Reseed restarts every layer's random number generator from a seed
// derived from seed and the layer's index (see layer.Base.Reseed). It
// allocates nothing.
func (n *Net[T]) Reseed(seed uint64) {
	for i, l := range n.layers {
		l.LayerBase().Reseed(mix64(seed + uint64(i)*0x9e3779b97f4a7c15))
	}
}

// mix64 is SplitMix64's finaliser: nearby seeds give unrelated streams.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// OutputBlobNames returns the names of the output blobs.
func (n *Net[T]) OutputBlobNames() []string {
	out := make([]string, len(n.outputIDs))
	for i, id := range n.outputIDs {
		out[i] = n.blobNames[id]
	}
	return out
}

// Params returns every layer's learnable blobs in layer order; shared ones
// appear once per layer using them.
func (n *Net[T]) Params() []*blob.Blob[T] { return n.params }

// LearnableParams returns the parameters a solver updates: each shared
// parameter once, at its owner.
func (n *Net[T]) LearnableParams() []*blob.Blob[T] { return n.learnableParams }

// ParamsLR returns each learnable parameter's lr_mult.
func (n *Net[T]) ParamsLR() []float32 { return n.paramsLR }

// ParamsWeightDecay returns each learnable parameter's decay_mult.
func (n *Net[T]) ParamsWeightDecay() []float32 { return n.paramsDecay }

// ParamOwners returns, for each entry of Params, the index of the entry
// owning its memory, or -1 for owners.
func (n *Net[T]) ParamOwners() []int { return n.paramOwners }

// ParamDisplayNames returns each entry of Params' ParamSpec name, or its
// index in its layer when unnamed.
func (n *Net[T]) ParamDisplayNames() []string { return n.paramDisplayNames }

// Close releases what the net holds outside Go's heap: it stops and closes
// the layers that own resources (data layers' prefetch goroutines and
// databases) and frees the activation blobs' device memory. Learnable
// parameters are left to the garbage collector's cleanup, because a test
// net shares them with its train net (ShareTrainedLayersWith) and freeing
// them here would pull them from under the other. Close is safe to call
// twice.
func (n *Net[T]) Close() error {
	var errs []error
	for i, l := range n.layers {
		if c, ok := l.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("layer %q: %w", n.layerNames[i], err))
			}
		}
	}
	if n.ctx.OnGPU() {
		for _, b := range n.blobs {
			errs = append(errs, b.Close())
		}
	}
	return errors.Join(errs...)
}
