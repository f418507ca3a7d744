package net

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// precisionAsked is what NVCaffe 0.17's fields ask of one layer: the type
// its blobs are stored in and the type its math runs in, forward and
// backward. A layer's own forward_type (and the others) wins over the
// net's default_forward_type; unset, both are FLOAT.
type precisionAsked struct {
	forward, backward, forwardMath, backwardMath caffepb.Type
}

// askedPrecision resolves NVCaffe's precision fields for one layer, as
// NVCaffe does: a field the layer sets, else the net's default.
func askedPrecision(p *caffepb.NetParameter, lp *caffepb.LayerParameter) precisionAsked {
	pick := func(own *caffepb.Type, net caffepb.Type) caffepb.Type {
		if own != nil {
			return *own
		}
		return net
	}
	return precisionAsked{
		forward:      pick(lp.ForwardType, p.GetDefaultForwardType()),
		backward:     pick(lp.BackwardType, p.GetDefaultBackwardType()),
		forwardMath:  pick(lp.ForwardMath, p.GetDefaultForwardMath()),
		backwardMath: pick(lp.BackwardMath, p.GetDefaultBackwardMath()),
	}
}

// reduced reports whether the layer asks for anything narrower than FLOAT.
func (a precisionAsked) reduced() bool {
	for _, t := range []caffepb.Type{a.forward, a.backward, a.forwardMath, a.backwardMath} {
		if t != caffepb.Type_FLOAT && t != caffepb.Type_DOUBLE {
			return true
		}
	}
	return false
}

// String writes what was asked the way NVCaffe's fields read:
// "FLOAT16/FLOAT16, math FLOAT/FLOAT", forward then backward.
func (a precisionAsked) String() string {
	s := a.forward.String() + "/" + a.backward.String()
	if a.forwardMath != a.forward || a.backwardMath != a.backward {
		s += fmt.Sprintf(", math %v/%v", a.forwardMath, a.backwardMath)
	}
	return s
}

// precisionRan names the precision gocaffe computes a layer in that has
// no 16-bit type to compute in: the net's element type, with TF32
// products where the device allows them.
func (n *Net[T]) precisionRan(onGPU bool) string {
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		return "FP64"
	}
	if onGPU && n.ctx.TF32() {
		return "TF32"
	}
	return "FP32"
}

// reducedAsked is the 16-bit type layer i should compute in: the net's
// Options.Precision where that is one, else what NVCaffe's fields ask of
// the layer's forward pass (FLOAT16, or gocaffe's BFLOAT16); the backward
// pass computes in the same type (NVCaffe allows it to differ; gocaffe
// stores a blob's data and diff alike).
func (n *Net[T]) reducedAsked(i int) syncedmem.Storage {
	if n.reduced.Reduced() || n.ownPrecision {
		return n.reduced
	}
	switch n.layers[i].precision.forward {
	case caffepb.Type_FLOAT16:
		return syncedmem.StorageFloat16
	case caffepb.Type_BFLOAT16:
		return syncedmem.StorageBFloat16
	}
	return syncedmem.StorageNative
}

// planPrecision chooses what each layer computes in and what each blob is
// stored in. A GPU layer asked for a 16-bit type (Options.Precision, or
// NVCaffe's precision fields) computes in it where its engine has a 16-bit
// path (layer.ReducedEngine: convolution, inner product, pooling, ReLU,
// Sigmoid, TanH, Dropout, LRN across channels, BatchNorm, Scale, Eltwise SUM,
// Split, Concat); the others, losses and softmax among them, compute in
// FP32 as NVCaffe's and PyTorch's autocast keep them. A blob is stored in 16 bits where every layer that writes or
// reads it computes in that type and no program needs its FP32 values
// (the net's outputs, Options.Keep); the layers at the edges of the
// 16-bit part convert. Weights and their gradients stay FP32: the
// solver's master copy. It also reports the loss scaling NVCaffe's fields
// ask for, which a solver applies.
func (n *Net[T]) planPrecision() string {
	asked := map[string]int{}
	var stayed []string // why layers asked for 16 bits compute in FP32
	reducedLayers := 0
	for i := range n.layers {
		if a := n.layers[i].precision; a.reduced() {
			n.plan.Layers[i].Asked = a.String()
			asked[n.plan.Layers[i].Asked]++
		}
		if s := n.reducedAsked(i); s.Reduced() {
			if err := n.setReduced(i, s); err != nil {
				stayed = append(stayed, err.Error())
			} else {
				reducedLayers++
			}
		}
	}
	stored, dropped, ordered := "", 0, ""
	if reducedLayers > 0 {
		stored, dropped = n.storeReduced()
		ordered = n.planChannelsLast()
		n.reshapeReduced()
	}
	// What each layer computes in, once storeReduced has returned to the
	// net's type the layers it left with no 16-bit blob.
	ran := map[string]int{}
	for i := range n.layers {
		l := &n.plan.Layers[i]
		l.Precision = n.precisionRan(l.Engine != "host")
		if s := n.layers[i].layer.LayerBase().Reduced(); s.Reduced() {
			l.Precision = s.String()
		}
		ran[l.Precision]++
	}
	summary := "every layer in " + countsOf(ran)
	if reducedLayers > 0 || len(stayed) > 0 {
		summary = "layers in " + countsOf(ran)
		if stored != "" {
			summary += "; " + stored
		}
	}
	if dropped > 0 {
		summary += fmt.Sprintf("; %d layers with no 16-bit blob compute in %s rather than convert", dropped, n.precisionRan(true))
	}
	if ordered != "" {
		summary += "; " + ordered
	}
	if len(asked) > 0 {
		summary += fmt.Sprintf("; NVCaffe's fields ask %s", countsOf(asked))
		if !n.ctx.OnGPU() {
			summary += "; on the host every layer computes in " + n.precisionRan(false) + ": 16-bit storage is built for GPU layers only (docs/forks.md)"
		}
	}
	if len(stayed) > 0 {
		summary += fmt.Sprintf("; %d asked for 16 bits stay in %s (%s first)", len(stayed), n.precisionRan(true), stayed[0])
	}
	if n.gradScale != 1 || n.gradScaleAdaptive {
		// The fields are a solver's to apply (package solver's LossScale
		// option, which may override them).
		how := "static"
		if n.gradScaleAdaptive {
			how = fmt.Sprintf("adaptive from %g", n.gradScale)
		}
		summary += fmt.Sprintf("; global_grad_scale %g (%s loss scaling): applied by a solver training the net", n.gradScale, how)
	}
	return summary
}

// reshapeReduced reshapes the layers computing in 16 bits, whose engines
// then choose their algorithms for the new type (a convolution times
// cuDNN's anew) before the liveness pass asks what workspace they need
// (layer.WorkspaceUser); the first forward pass would do it otherwise.
func (n *Net[T]) reshapeReduced() {
	for _, r := range n.layers {
		if !r.layer.LayerBase().Reduced().Reduced() {
			continue
		}
		if err := layer.Reshape(r.layer, r.bottoms, r.tops); err != nil {
			logf.Warnf(n.log, "Net %q: layer %s: reshaping in %v: %v (the first forward pass tries again)", n.name, r.name, r.layer.LayerBase().Reduced(), err)
		}
	}
}

// setReduced asks layer i's engine to compute in s, where it can: on a GPU,
// with float32 blobs, an engine with a 16-bit path.
func (n *Net[T]) setReduced(i int, s syncedmem.Storage) error {
	r := n.layers[i]
	var zero T
	switch {
	case !n.ctx.OnGPU():
		return fmt.Errorf("layer %q: the host computes in FP32", r.name)
	case unsafe.Sizeof(zero) == 8:
		return fmt.Errorf("layer %q: a float64 net", r.name)
	}
	return layer.SetReduced(r.layer, s)
}

// storeReduced stores in 16 bits the blobs that only layers computing in
// that type write and read. A layer none of whose blobs is then stored so
// (a ReLU between two FP32 layers, a convolution whose input and output
// other layers read in FP32) would only convert its FP32 blobs and back:
// it computes in the net's type again. (Its blobs are FP32 already, so
// choosing them anew changes nothing; the loop stops after one more
// round.) It says how many blobs it stored and how many layers it
// returned to the net's type.
func (n *Net[T]) storeReduced() (string, int) {
	touched := n.touchingLayers()
	dropped := 0
	for {
		stored, bytes := n.storeBlobs(touched)
		changed := false
		for _, r := range n.layers {
			if !r.layer.LayerBase().Reduced().Reduced() || n.anyReducedBlob(r) {
				continue
			}
			if err := layer.SetReduced(r.layer, syncedmem.StorageNative); err != nil {
				logf.Warnf(n.log, "Net %q: %v", n.name, err)
				continue
			}
			dropped++
			changed = true
		}
		if !changed {
			return fmt.Sprintf("%d blobs stored in 16 bits (%s of data)", stored, mib(bytes)), dropped
		}
	}
}

// storeBlobs gives each blob 16-bit storage where every layer touching it
// computes in the same 16-bit type and no program needs its FP32 values
// (an output, Options.Keep), and the net's own storage otherwise. Blobs
// that share memory (a Split's tops and its bottom share the data, a
// Flatten's share data and diff) are decided together, over the layers
// touching any of them, so that one memory never gets two storages; a
// blob sharing memory with none of the net's others (outside the net)
// keeps the net's type.
func (n *Net[T]) storeBlobs(touched [][]int) (stored, bytes int) {
	outputs := map[int]bool{}
	for _, id := range n.outputIDs {
		outputs[id] = true
	}
	counted := map[*syncedmem.SyncedMemory]bool{} // a shared memory's bytes count once
	for _, group := range n.sharingGroups() {
		s := n.groupStorage(group, touched, outputs)
		for _, id := range group {
			b := &n.blobs[id]
			if err := b.blob.SetStorage(s); err != nil {
				logf.Warnf(n.log, "Net %q: blob %s stays in the net's type: %v", n.name, b.name, err)
				continue
			}
			if s.Reduced() {
				stored++
				if m := b.blob.Data(); !counted[m] {
					counted[m] = true
					bytes += b.blob.Count() * 2
				}
			}
		}
	}
	n.storeExchanged()
	return stored, bytes
}

// groupStorage is the storage of one group of blobs sharing memory: the
// 16-bit type every layer touching them computes in, where at least two
// do (a maker and a reader) and no blob of the group is an output or kept
// or shares memory beyond the group.
func (n *Net[T]) groupStorage(group []int, touched [][]int, outputs map[int]bool) syncedmem.Storage {
	var layers []int
	for _, id := range group {
		b := &n.blobs[id]
		shared := b.blob.Data().Shared() || b.blob.Diff().Shared()
		if outputs[id] || n.keep[b.name] || (shared && len(group) == 1) {
			return syncedmem.StorageNative
		}
		layers = append(layers, touched[id]...)
	}
	if len(layers) < 2 {
		return syncedmem.StorageNative
	}
	s := n.layers[layers[0]].layer.LayerBase().Reduced()
	for _, i := range layers[1:] {
		if n.layers[i].layer.LayerBase().Reduced() != s {
			return syncedmem.StorageNative
		}
	}
	return s
}

// sharingGroups partitions the net's blobs into groups whose members
// share data or diff memory with one another, in blob order.
func (n *Net[T]) sharingGroups() [][]int {
	parent := make([]int, len(n.blobs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[*syncedmem.SyncedMemory]int{}
	for id := range n.blobs {
		for _, m := range []*syncedmem.SyncedMemory{n.blobs[id].blob.Data(), n.blobs[id].blob.Diff()} {
			if m == nil {
				continue
			}
			if o, ok := owner[m]; ok {
				parent[find(id)] = find(o)
			} else {
				owner[m] = id
			}
		}
	}
	index := map[int]int{}
	var groups [][]int
	for id := range n.blobs {
		r := find(id)
		g, ok := index[r]
		if !ok {
			g = len(groups)
			index[r] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], id)
	}
	return groups
}

// storeExchanged gives the blob a layer exchanges its top's data with
// (layer.TopDataExchanger: BatchNorm in place) the top's storage, so that
// the two memories can change hands; otherwise the layer copies its input
// aside in every pass.
func (n *Net[T]) storeExchanged() {
	for _, r := range n.layers {
		x, ok := r.layer.(layer.TopDataExchanger[T])
		if !ok || len(r.tops) == 0 {
			continue
		}
		if b := x.ExchangeBlob(); b != nil {
			if err := b.SetStorage(r.tops[0].Storage()); err != nil {
				logf.Warnf(n.log, "Net %q: layer %s: its exchange blob stays in the net's type: %v", n.name, r.name, err)
			}
		}
	}
}

// anyReducedBlob reports whether a blob layer r reads or writes is stored
// in 16 bits.
func (n *Net[T]) anyReducedBlob(r layerRecord[T]) bool {
	for _, id := range slices.Concat(r.bottomIDs, r.topIDs) {
		if n.blobs[id].blob.Storage().Reduced() {
			return true
		}
	}
	return false
}

// logPrecision logs, where any layer was asked for a 16-bit type, what
// each layer computes in, as NVCaffe logs each layer's types.
func (n *Net[T]) logPrecision() {
	asked := false
	for i := range n.layers {
		asked = asked || n.reducedAsked(i).Reduced()
	}
	if !asked {
		return
	}
	for i, l := range n.plan.Layers {
		if !n.ctx.OnGPU() {
			break // the host computes every layer in FP32: the warning says so
		}
		var storage []string
		for _, id := range slices.Concat(n.layers[i].bottomIDs, n.layers[i].topIDs) {
			if st := n.blobs[id].blob.Storage(); st.Reduced() {
				storage = append(storage, n.blobs[id].name+" "+st.String())
			}
		}
		blobs := "its blobs in FP32"
		if len(storage) > 0 {
			blobs = "16-bit blobs: " + strings.Join(slices.Compact(storage), ", ")
		}
		logf.Infof(n.log, "Layer %s (%s) computes in %s; %s", l.Name, l.Type, l.Precision, blobs)
	}
	var names []string
	for i := range n.layers {
		if n.reducedAsked(i).Reduced() && !n.layers[i].layer.LayerBase().Reduced().Reduced() {
			names = append(names, n.layers[i].name)
		}
	}
	if len(names) > 0 {
		why := "no 16-bit path for them, or no blob of theirs stored in 16 bits"
		if !n.ctx.OnGPU() {
			why = "the host computes every layer in FP32; 16 bits are for GPU layers"
		}
		logf.Warnf(n.log, "Net %q: %d layers asked for 16 bits compute in %s (%s first): %s (the precision column of `gocaffe time -plan` shows each layer)",
			n.name, len(names), n.precisionRan(n.ctx.OnGPU()), names[0], why)
	}
}

// countsOf writes a count per key: "FP32 (12 layers)", or
// "FLOAT/FLOAT16 (1 layer), FLOAT16/FLOAT16 (3 layers)".
func countsOf(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d %s)", k, m[k], plural(m[k], "layer"))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
