package net

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The "fold" pass: inference folding of a TEST-phase net on the host.
//
// A chain of layers in place on the single top of a Convolution or
// InnerProduct (a layer.Folder), made of per-channel affine maps
// (BatchNorm with global statistics, Scale: layer.ChannelAffine) and then
// at most one activation (ReLU: layer.Activator), is computed by the
// producer alone: the maps folded into copies of its weights and bias, the
// activation and bias applied in its GEMM's epilogue. A producer with no
// such chain still takes its bias in the epilogue. Dropout in place (an
// identity in TEST) and Split (its tops share the bottom's data) are
// removed: only their Reshape runs. Producers that read the same bottom
// may be computed by the first of them (plan_siblings.go).
//
// What stays as in Caffe:
//   - every named blob holds after a full forward pass what the unfolded
//     net leaves there, within FoldTolerance: only in-place chains fold, so
//     no blob is skipped (the value a chain overwrote in place is never
//     visible after Caffe's pass either);
//   - a partial pass (ForwardFromTo) that cuts a chain runs the chain's
//     layers as written, so stepping through the net layer by layer reads
//     each layer's own output;
//   - the layers' own blobs (weights, statistics) are never changed; the
//     folded copies are made again before a pass whenever one of those
//     blobs was written since (syncedmem's Writes), as after loading
//     weights or a solver's update;
//   - nothing folds in a TRAIN net, a net on a GPU, with debug_info, where
//     any layer of a chain may run a backward pass (a loss under it, or
//     force_backward, in a net that may run backward), or with
//     Options.NoFold. A net built for forward passes only
//     (Options.ForwardOnly: the solver's test nets, `gocaffe test`)
//     folds with its losses, whose values then come from the folded
//     layers within FoldTolerance.

// FoldTolerance is what folding may change in a net's outputs: for every
// output blob, max |folded - unfolded| <= FoldTolerance * max |unfolded|
// (the weights are rounded to T once more after scaling, and the sums
// are formed in another order; 3x3 convolutions may take Winograd's
// F(4x4, 3x3), which rounds otherwise). Measured on the deploy nets of
// models/ at float32: 1e-6 or less on im2col alone, up to 6e-6 with
// Winograd (VGG's conv1_2, ResNet-50's res2c_branch2b: 3e-6);
// net/plan_fold_test.go checks the bound.
const FoldTolerance = 1e-4

// foldChain is one producer and the layers it computes.
type foldChain[T Float] struct {
	producer int   // its index
	members  []int // the folded layers after it, in order
	folder   layer.Folder[T]
	affines  []layer.ChannelAffine[T]
	act      layer.Activation
	sources  []*blob.Blob[T] // the blobs the fold is computed from
	mems     []*syncedmem.SyncedMemory
	writes   []uint64
	active   bool // SetFold succeeded with the sources as recorded
}

// foldState is the fold pass's decision, consulted by every pass.
type foldState[T Float] struct {
	chains  []*foldChain[T]
	removed []bool // layer i's forward pass is skipped (only its Reshape runs)
}

// planFold runs the pass (see above).
func (n *Net[T]) planFold() string {
	switch {
	case n.noFold:
		return "none: Options.NoFold"
	case n.phase != caffepb.Phase_TEST:
		return "none: only a TEST-phase net folds"
	case n.ctx.OnGPU():
		return "none: the net runs on a GPU"
	case n.debugInfo:
		return "none: debug_info logs each layer's own pass"
	}
	fs := &foldState[T]{removed: make([]bool, len(n.layers))}
	folded := map[string]int{}
	for i := 0; i < len(n.layers); i++ {
		c := n.foldChainAt(i)
		if c == nil {
			continue
		}
		if err := c.set(n); err != nil || !c.active {
			continue
		}
		fs.chains = append(fs.chains, c)
		prod := n.layers[i].layer
		var kinds []string
		for _, m := range c.members {
			ml := n.layers[m].layer
			ml.LayerBase().FusedInto(prod, func() bool { return c.active && !prod.LayerBase().FusionSuspended() }, true)
			n.plan.Layers[m].ComputedBy, n.plan.Layers[m].ForwardOnly = n.layers[i].name, true
			n.plan.Layers[m].Folded = "into " + n.layers[i].name
			kinds = append(kinds, ml.Type())
		}
		key := prod.Type()
		if len(kinds) > 0 {
			key += "+" + strings.Join(kinds, "+")
		}
		folded[key]++
		if len(c.members) > 0 {
			i = c.members[len(c.members)-1]
		}
	}
	removed := 0
	for i, r := range n.layers {
		if n.runsBackward(i) || r.layer.LayerBase().EngineOnGPU() {
			continue
		}
		switch r.layer.Type() {
		case "Split":
		case "Dropout":
			if len(r.tops) != 1 || len(r.bottoms) != 1 || r.tops[0] != r.bottoms[0] {
				continue
			}
		default:
			continue
		}
		fs.removed[i] = true
		n.plan.Layers[i].Folded = "removed"
		removed++
	}
	siblings := n.planSiblings(fs)
	// Layers that keep state for a backward pass they never run skip it.
	lean := 0
	for i, r := range n.layers {
		if io, ok := r.layer.(layer.InferenceOnly); ok && !n.runsBackward(i) && !r.layer.LayerBase().EngineOnGPU() {
			io.SetInferenceOnly(true)
			n.plan.Layers[i].Folded = "without backward state"
			lean++
		}
	}
	if len(fs.chains) == 0 && removed == 0 && lean == 0 {
		return "nothing to fold"
	}
	n.fold = fs
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(folded)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, folded[k]))
	}
	return fmt.Sprintf("%d producers fold the layers after them (%s); %d computed with a sibling's pass; %d Dropout/Split removed; %d layers without backward state; outputs within %g relative of the unfolded net's",
		len(fs.chains), strings.Join(parts, ", "), siblings, removed, lean, FoldTolerance)
}

// runsBackward reports whether layer i may run a backward pass: never in
// a net built for forward passes only.
func (n *Net[T]) runsBackward(i int) bool { return !n.forwardOnly && n.layers[i].needBackward }

// foldChainAt returns the chain whose producer is layer i, or nil.
func (n *Net[T]) foldChainAt(i int) *foldChain[T] {
	r := &n.layers[i]
	f, ok := r.layer.(layer.Folder[T])
	if !ok || n.runsBackward(i) || len(r.tops) != 1 || r.layer.LayerBase().EngineOnGPU() || f.FoldChannels() == 0 {
		return nil
	}
	if by, _ := r.layer.LayerBase().ComputedBy(); by != nil {
		return nil
	}
	c := &foldChain[T]{producer: i, folder: f}
	top := r.tops[0]
	for j := i + 1; j < len(n.layers) && c.act.Kind == layer.ActNone; j++ {
		m := &n.layers[j]
		if len(m.bottoms) != 1 || len(m.tops) != 1 || m.bottoms[0] != top || m.tops[0] != top ||
			n.runsBackward(j) || m.layer.LayerBase().EngineOnGPU() {
			break
		}
		if by, _ := m.layer.LayerBase().ComputedBy(); by != nil {
			break
		}
		if a, ok := m.layer.(layer.ChannelAffine[T]); ok {
			s, b := make([]float64, f.FoldChannels()), make([]float64, f.FoldChannels())
			if !a.Affine(top.Shape(), s, b) {
				break
			}
			c.members, c.affines = append(c.members, j), append(c.affines, a)
			continue
		}
		if a, ok := m.layer.(layer.Activator); ok {
			act, ok := a.Activation()
			if !ok {
				break
			}
			c.members, c.act = append(c.members, j), act
			continue
		}
		break
	}
	c.sources = slices.Clone(f.FoldSources())
	for _, a := range c.affines {
		c.sources = append(c.sources, a.AffineSources()...)
	}
	return c
}

// set computes the fold from the sources as they are now and hands it to
// the producer.
func (c *foldChain[T]) set(n *Net[T]) error {
	c.active = false
	channels := c.folder.FoldChannels()
	f := &layer.Fold{Act: c.act, NoWinograd: n.noWinograd}
	if len(c.affines) > 0 {
		shape := n.layers[c.producer].tops[0].Shape()
		f.Scale, f.Shift = make([]float64, channels), make([]float64, channels)
		for i := range f.Scale {
			f.Scale[i] = 1
		}
		s, b := make([]float64, channels), make([]float64, channels)
		for _, a := range c.affines {
			if !a.Affine(shape, s, b) {
				// No longer a map (its parameters changed): run unfolded.
				return c.folder.SetFold(nil)
			}
			for o := range f.Scale {
				f.Scale[o], f.Shift[o] = s[o]*f.Scale[o], s[o]*f.Shift[o]+b[o]
			}
		}
	}
	if err := c.folder.SetFold(f); err != nil {
		return err
	}
	c.mems, c.writes = c.mems[:0], c.writes[:0]
	for _, b := range c.sources {
		m := b.Data()
		c.mems = append(c.mems, m)
		var w uint64
		if m != nil {
			w = m.Writes()
		}
		c.writes = append(c.writes, w)
	}
	c.active = true
	return nil
}

// stale says whether a source was written or replaced since set.
func (c *foldChain[T]) stale() bool {
	for i, b := range c.sources {
		m := b.Data()
		if m != c.mems[i] || (m != nil && m.Writes() != c.writes[i]) {
			return true
		}
	}
	return false
}

// foldBefore prepares the folds for a pass over layers lo to hi: it
// refolds the chains whose sources were written and suspends those the
// range cuts (their layers then run as written); foldAfter resumes them.
// Neither allocates unless a fold is made again.
func (n *Net[T]) foldBefore(lo, hi int) error {
	if n.fold == nil {
		return nil
	}
	for _, c := range n.fold.chains {
		last := c.producer
		if len(c.members) > 0 {
			last = c.members[len(c.members)-1]
		}
		if last < lo || c.producer > hi {
			continue
		}
		if c.producer < lo || last > hi {
			layer.SuspendFusion(n.layers[c.producer].layer, true)
			continue
		}
		if c.stale() {
			if err := c.set(n); err != nil {
				return fmt.Errorf("net %q: layer %q: folding: %w", n.name, n.layers[c.producer].name, err)
			}
		}
	}
	return nil
}

func (n *Net[T]) foldAfter(lo, hi int) {
	if n.fold == nil {
		return
	}
	for _, c := range n.fold.chains {
		if n.layers[c.producer].layer.LayerBase().FusionSuspended() {
			layer.SuspendFusion(n.layers[c.producer].layer, false)
		}
	}
}

// foldRemoved says whether the fold pass removed layer i's forward pass.
func (n *Net[T]) foldRemoved(i int) bool { return n.fold != nil && n.fold.removed[i] }
