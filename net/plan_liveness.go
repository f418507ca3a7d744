package net

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The liveness pass gives blobs whose values are never needed at the same
// time the same bytes of one memory (the net's arena), as a register
// allocator gives variables registers. An iteration is a sequence of steps: the forward pass of
// layer i is step i, its backward pass step 2L-1-i (L layers). A memory
// (a blob's data or diff, with the blobs that alias it: the tops of Split,
// Flatten, Reshape, a one-piece Concat or Slice, which share their
// bottom's) is live from the first step that writes it to the last that
// reads it:
//
//   - data: written by the forward pass of the layer that makes it, read by
//     the forward passes of the layers that take it (and those in place on
//     it), and by the backward passes of those of them whose backward pass
//     reads its bottoms' or tops' data (layer.Spec.BackwardReads: a type
//     that does not say is taken to read both);
//   - diff: written by the backward passes of the layers that take it, read
//     by the backward passes of those in place on it and the one that made
//     it;
//   - a layer's own blob it lists (layer.BufferLister): saved values from
//     its forward step to its backward step, scratch in the one step that
//     uses it; a layer's copy of its top after its forward pass and the
//     next layer's copy of the same blob before its own (BatchNorm's
//     output, a Scale's input in place after it) share one memory.
//
// A net that never runs a backward pass (built with Options.ForwardOnly,
// or with no layer that needs one) has only the forward steps: a chain of
// layers needs room for two or three blobs, whatever its length.
//
// Memory keeps its own (Caffe's) values when it is kept: a net output, a
// blob the options name (Options.Keep), a blob a source layer writes (the
// caller fills an Input's top, a data layer's top may outlive a pass), a
// loss top's diff (which holds the loss weight), the data of a layer's
// tops that it keeps between passes (layer.TopKeeper), memory a layer shares with
// a blob of its own (SoftmaxWithLoss's probabilities), a diff that a layer
// taking it leaves unwritten (propagate_down false), and every blob of a
// net with debug_info or of one built with Options.NoMemoryReuse. On the
// GPU the layers' own blobs keep their memory, and a layer's backward pass
// is taken to read both its bottoms and tops unless its type's GPU half
// was checked to read what its host half does (gpuBackwardReadsAsHost).
//
// A layer in place on a top whose input its backward pass needs may
// compute into a blob of its own and exchange data memories with the top
// (an in-place BatchNorm on the GPU: layer.TopDataExchanger), which
// PrepareForward undoes before the top's maker runs again: the top's
// memory then holds the input from the maker's forward pass to the
// layer's backward pass, and the layer's blob, placed too, the output from
// the layer's forward pass to the last pass reading the blob after it (a
// residual branch's normalized output dies at the sum).
//
// Each placed memory is a view of its bytes in the arena
// (syncedmem.SetCPUData, SetSharedGPUData). A blob placed there keeps it
// while its Reshapes stay within the count it was planned for; a larger Reshape gives it memory of its own
// again (blob.PlaceData), never another blob's.

// memUse is one memory the pass plans: a blob's data or diff and the blobs
// that alias it.
type memUse[T Float] struct {
	blobs      []int           // the blobs using it (Net.blobs indices), the maker's first
	buffers    []*blob.Blob[T] // instead, layers' own blobs (layer.Buffer)
	name       string          // the buffers': "bn1's xNorm"
	diff       bool
	start, end int // the steps it is live in (start > end: never used)
	bytes      int
	kept       string                  // why it keeps memory of its own, "" when placed
	offset     int                     // where it is in the net's arena (placed)
	mem        *syncedmem.SyncedMemory // its view of the arena (placed)
	lent       bool                    // mem views another net's arena (BorrowActivations)
	// workspace, if not nil, says the use is a layer's workspace for a
	// pass (layer.WorkspaceUser), which has no blob.
	workspace *workspaceUse
	// holds: the net blob whose values a layer's own blob (buffers)
	// holds from that layer's forward pass on (layer.TopDataExchanger).
	holds   []int
	storage syncedmem.Storage // the device's type for its values (the precision pass)
}

// planLiveness places the blobs' data and diffs in the arena (see
// above) and reports how much the plan saves.
func (n *Net[T]) planLiveness() string {
	training := !n.forwardOnly && slices.ContainsFunc(n.layers, func(r layerRecord[T]) bool { return r.needBackward })
	n.findExchangers() // before any pass: no top is exchanged yet
	uses := n.memoryUses(false, training)
	if training {
		uses = append(uses, n.memoryUses(true, training)...)
	}
	n.uses, n.arena = uses, nil
	off := ""
	switch {
	case n.noReuse:
		off = "off (NoMemoryReuse): every blob has memory of its own"
	case n.debugInfo:
		off = "off: debug_info reads every blob after each layer"
	}
	if off != "" {
		for i := range uses {
			uses[i].kept = "memory reuse off"
		}
		return off
	}
	// Only now: a layer may change how it keeps its values when asked.
	// A GPU engine keeps its own blobs its own way (cuDNN's BatchNorm its
	// saved statistics and scratch): only the host's are placed.
	if !n.ctx.OnGPU() && !simGPU {
		uses = append(uses, n.bufferUses(training)...)
	}
	if n.ctx.OnGPU() {
		uses = append(uses, n.workspaceUses(training)...)
	}
	for i := range uses {
		uses[i].storage = uses[i].storageOf(n)
	}
	n.uses = uses
	total := assignOffsets(uses, n.arenaBytes)
	mode := "forward only"
	if training {
		mode = "forward and backward"
	}
	if err := n.makeArena(total); err != nil {
		for i := range uses {
			if uses[i].kept == "" {
				uses[i].kept = err.Error()
			}
		}
		return fmt.Sprintf("%s: off: %v", mode, err)
	}
	own, placed := 0, 0
	for i := range uses {
		u := &uses[i]
		if u.start > u.end {
			continue // never used
		}
		if u.kept != "" {
			own += n.onDevice(u.bytes, u.storage)
			continue
		}
		if err := n.placeInArena(u, n.arena, u.offset); err != nil {
			// Not expected: the blob keeps the memory it has, which no
			// other blob of the plan uses.
			u.kept = err.Error()
			own += n.onDevice(u.bytes, u.storage)
			continue
		}
		placed += n.arenaBytes(u)
	}
	n.giveWorkspaces()
	return fmt.Sprintf("%s: %d memories of %s in an arena of %s (at least %s are live at once); %s kept apart",
		mode, placedCount(uses), mib(placed), mib(total), mib(busiestStep(uses, n.arenaBytes)), mib(own))
}

// arenaAlign is the alignment of each memory in the arena: cuDNN's and
// cuBLAS's kernels load vectors of up to 16 bytes, and 256 bytes is what
// cudaMalloc gives.
const arenaAlign = 256

// arenaBytes is the bytes u takes in the arena: its device bytes on a GPU
// (half for a 16-bit storage), rounded up to arenaAlign.
func (n *Net[T]) arenaBytes(u *memUse[T]) int {
	b := n.onDevice(u.bytes, u.storage)
	return (b + arenaAlign - 1) / arenaAlign * arenaAlign
}

// makeArena allocates the arena of total bytes on the net's device (nil
// for none): on a GPU its device memory, on the host its host memory.
func (n *Net[T]) makeArena(total int) error {
	n.arena, n.arenaLent, n.overflow = nil, false, nil
	if total == 0 {
		return nil
	}
	a, err := n.newArena(total)
	n.arena = a
	return err
}

// newArena allocates memory of bytes for memories to view, on the net's
// device.
func (n *Net[T]) newArena(bytes int) (*syncedmem.SyncedMemory, error) {
	a := syncedmem.New(bytes)
	a.SetDevice(n.ctx.Device())
	a.MarkShared() // no blob's: the placed memories are views of it
	if n.ctx.OnGPU() {
		if _, err := a.MutableGPUData(); err != nil {
			return nil, fmt.Errorf("the activations' arena of %s: %w", mib(bytes), err)
		}
	} else {
		a.MutableCPUData()
	}
	return a, nil
}

// placeInArena makes u's memory a view of its bytes in arena, at offset,
// and puts u's blobs' data or diffs in it.
func (n *Net[T]) placeInArena(u *memUse[T], arena *syncedmem.SyncedMemory, offset int) error {
	v := syncedmem.New(u.bytes)
	v.SetDevice(n.ctx.Device())
	if err := v.SetStorage(u.storage); err != nil {
		return err
	}
	if n.ctx.OnGPU() {
		base, ok := arena.DeviceBuffer()
		if !ok {
			return errors.New("the arena has no device memory")
		}
		if err := v.SetSharedGPUData(base+cuda.DevicePtr(offset), v.DeviceSize()); err != nil {
			return err
		}
	} else if err := v.SetCPUData(arena.MutableCPUData()[offset : offset+u.bytes]); err != nil {
		return err
	}
	v.MarkShared() // no layer swaps it away (blob.SwapData)
	u.mem = v
	return u.place(n, v)
}

// assignOffsets gives each placeable use an offset in one arena such that
// no two uses live at the same step overlap, largest use first: each goes
// to the smallest gap between the uses already placed that are live with
// it, else above them all ("greedy by size", as TensorFlow Lite plans its
// arena). Offsets, unlike slots of fixed sizes, let a small memory that
// lives long take part of what a large one held: on a ResNet-50 at batch
// 64 on the GPU, slots of the largest use first held 10% over the bytes
// live at the busiest step. size gives a use's bytes in the arena. It
// returns the arena's size.
func assignOffsets[T Float](uses []memUse[T], size func(*memUse[T]) int) int {
	order := make([]int, 0, len(uses))
	for i, u := range uses {
		if u.kept == "" && u.start <= u.end {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(uses[b].bytes, uses[a].bytes), cmp.Compare(uses[a].start, uses[b].start))
	})
	total := 0
	var done []int // the uses placed, in order of offset
	var live []int // scratch: those of done live with the use being placed
	for _, i := range order {
		u := &uses[i]
		sz := size(u)
		live = live[:0]
		for _, j := range done {
			if w := &uses[j]; w.start <= u.end && u.start <= w.end {
				live = append(live, j)
			}
		}
		off, gap, top := -1, 0, 0
		for _, j := range live {
			w := &uses[j]
			if g := w.offset - top; g >= sz && (off < 0 || g < gap) {
				off, gap = top, g
			}
			top = max(top, w.offset+size(w))
		}
		if off < 0 {
			off = top
		}
		u.offset = off
		total = max(total, off+sz)
		k, _ := slices.BinarySearchFunc(done, off, func(j, off int) int { return cmp.Compare(uses[j].offset, off) })
		done = slices.Insert(done, k, i)
	}
	return total
}

// busiestStep returns the most bytes the placed uses need at one step: no
// placement can take less.
func busiestStep[T Float](uses []memUse[T], size func(*memUse[T]) int) int {
	var live []int // bytes live at each step
	for i, u := range uses {
		if u.kept != "" || u.start > u.end {
			continue
		}
		for len(live) <= u.end {
			live = append(live, 0)
		}
		for st := u.start; st <= u.end; st++ {
			live[st] += size(&uses[i])
		}
	}
	return slices.Max(append(live, 0))
}

func placedCount[T Float](uses []memUse[T]) int {
	k := 0
	for _, u := range uses {
		if u.kept == "" && u.start <= u.end {
			k++
		}
	}
	return k
}

// memoryUses returns the net's data memories (diff false) or diff
// memories, with the steps they are live in and why a memory is kept
// apart.
func (n *Net[T]) memoryUses(diff, training bool) []memUse[T] {
	steps := 2 * len(n.layers)
	back := func(i int) int { return steps - 1 - i }
	mem := func(b *blob.Blob[T]) *syncedmem.SyncedMemory {
		if diff {
			return b.Diff()
		}
		return b.Data()
	}
	group := make([]int, len(n.blobs)) // the memUse of each blob, -1 before it is made
	for i := range group {
		group[i] = -1
	}
	var uses []memUse[T]
	touch := func(g, step int) {
		u := &uses[g]
		u.start, u.end = min(u.start, step), max(u.end, step)
	}
	keep := func(g int, why string) {
		if uses[g].kept == "" {
			uses[g].kept = why
		}
	}
	for i, r := range n.layers {
		reads := n.backwardReads(i)
		// passedOn[k]: bottom k is also a top, or aliased by one.
		passedOn := make([]bool, len(r.bottoms))
		alias := make([]int, len(r.tops))
		for j, t := range r.tops {
			alias[j] = -1
			if k := slices.Index(r.bottomIDs, r.topIDs[j]); k >= 0 {
				passedOn[k] = true
				continue
			}
			for k, b := range r.bottoms {
				if m := mem(t); m != nil && m == mem(b) {
					alias[j], passedOn[k] = k, true
					break
				}
			}
		}
		for k, id := range r.bottomIDs {
			g := group[id]
			switch {
			case !diff:
				touch(g, i)
				if training && r.needBackward && reads.ReadsBottom() {
					touch(g, back(i))
				}
			case r.needBackward:
				touch(g, back(i))
				if !passedOn[k] && !r.bottomNeedBackward[k] {
					keep(g, fmt.Sprintf("layer %q leaves it unwritten", r.name))
				}
			default:
				if !passedOn[k] {
					keep(g, fmt.Sprintf("layer %q leaves it unwritten", r.name))
				}
			}
		}
		for j, id := range r.topIDs {
			g := group[id]
			if g < 0 && alias[j] >= 0 {
				g = group[r.bottomIDs[alias[j]]]
				group[id] = g
				uses[g].blobs = append(uses[g].blobs, id)
			}
			if g < 0 {
				g = len(uses)
				group[id] = g
				uses = append(uses, memUse[T]{blobs: []int{id}, diff: diff, start: steps, end: -1, bytes: memBytes(mem(r.tops[j]))})
				if len(r.bottoms) == 0 {
					keep(g, "written by a source layer")
				}
				if k, ok := r.layer.(layer.TopKeeper); ok && !diff && k.KeepsTops() {
					keep(g, "kept by its layer between passes")
				}
			}
			uses[g].bytes = max(uses[g].bytes, memBytes(mem(r.tops[j])))
			if !diff {
				touch(g, i)
				if training && r.needBackward && reads.ReadsTop() {
					touch(g, back(i))
				}
			} else if r.needBackward {
				touch(g, back(i))
			}
			if n.blobs[id].lossWeight != 0 {
				keep(g, "a loss")
			}
		}
		if ex := exchangeBlob(r.layer); ex != nil && !diff {
			uses, group = n.exchangedUses(uses, group, i, ex, training && r.needBackward)
		}
	}
	outputs := map[int]bool{}
	for _, id := range n.outputIDs {
		outputs[id] = true
	}
	for g := range uses {
		u := &uses[g]
		var m *syncedmem.SyncedMemory
		if len(u.blobs) > 0 {
			m = mem(n.blobs[u.blobs[0]].blob)
		} else {
			m = mem(u.buffers[0])
		}
		for _, id := range slices.Concat(u.blobs, u.holds) {
			switch {
			case outputs[id]:
				keep(g, "a net output")
			case n.keep[n.blobs[id].name]:
				keep(g, "kept (Options.Keep)")
			}
		}
		switch {
		case m == nil || u.bytes == 0:
			keep(g, "no memory")
		case m.Shared() && len(u.blobs) == 1:
			keep(g, "shared with a blob of a layer's own")
		}
	}
	return uses
}

// exchangeBlob returns the blob of l's own whose data memory l's forward
// pass exchanges with its top's (layer.TopDataExchanger), or nil.
func exchangeBlob[T Float](l layer.Layer[T]) *blob.Blob[T] {
	if x, ok := l.(layer.TopDataExchanger[T]); ok {
		return x.ExchangeBlob()
	}
	return nil
}

// exchangedUses plans the memories of layer i, in place on its top 0,
// whose forward pass exchanges that top's data memory with ex's
// (layer.TopDataExchanger): the top's memory holds the input from its
// maker's forward pass to layer i's backward pass (backward true), and
// ex's, a use of its own, the output from layer i's forward pass to the
// last pass that reads the blob after it. Without a backward pass the
// top's memory keeps the input to no purpose but is exchanged each pass:
// both keep memories of their own. It returns uses and group updated.
func (n *Net[T]) exchangedUses(uses []memUse[T], group []int, i int, ex *blob.Blob[T], backward bool) ([]memUse[T], []int) {
	r := &n.layers[i]
	id := r.topIDs[0]
	g := group[id]
	if !backward || uses[g].buffers != nil || len(uses[g].holds) > 0 {
		// (A second exchange of the same blob: each memory holds several
		// kinds of value in turn.)
		why := fmt.Sprintf("exchanged with layer %q's saved input each pass", r.name)
		if uses[g].kept == "" {
			uses[g].kept = why
		}
		uses = append(uses, memUse[T]{buffers: []*blob.Blob[T]{ex}, name: fmt.Sprintf("%s's output", r.name), start: i, end: i,
			bytes: memBytes(ex.Data()), kept: why, holds: []int{id}})
		return uses, group
	}
	steps := 2 * len(n.layers)
	u := &uses[g]
	u.end = max(u.end, steps-1-i) // the backward pass reads x in ex
	group[id] = len(uses)
	uses = append(uses, memUse[T]{buffers: []*blob.Blob[T]{ex}, name: fmt.Sprintf("%s's output", r.name), start: i, end: i,
		bytes: memBytes(ex.Data()), holds: []int{id}})
	return uses, group
}

// exchanger is a layer that exchanges its top's data memory
// (layer.TopDataExchanger) and the layer that makes that top.
type exchanger struct{ layer, maker int }

// findExchangers lists the layers that may exchange a top's data memory,
// the last first, with the layers making those tops.
func (n *Net[T]) findExchangers() {
	n.exchangers = n.exchangers[:0]
	for i := len(n.layers) - 1; i >= 0; i-- {
		r := &n.layers[i]
		if _, ok := r.layer.(layer.TopDataExchanger[T]); !ok || len(r.topIDs) == 0 {
			continue
		}
		maker := i
		for k := range i {
			if slices.Contains(n.layers[k].topIDs, r.topIDs[0]) {
				maker = k
				break
			}
		}
		n.exchangers = append(n.exchangers, exchanger{i, maker})
	}
}

// PrepareForward readies layers start to end for their forward passes:
// a top that a layer exchanged with a blob of its own in the last pass
// (layer.TopDataExchanger) gets its memory back where the range makes it
// again, so that each memory holds what the memory plan placed there.
// ForwardFromTo calls it; a program running the layers' passes one by one
// (gocaffe time) calls it before each forward pass over them. It
// allocates nothing.
func (n *Net[T]) PrepareForward(start, end int) error {
	for _, x := range n.exchangers { // the last first: a blob exchanged twice
		if x.maker < start || x.maker > end {
			continue
		}
		if err := n.layers[x.layer].layer.(layer.TopDataExchanger[T]).RestoreTopData(); err != nil {
			return err
		}
	}
	return nil
}

func memBytes(m *syncedmem.SyncedMemory) int {
	if m == nil {
		return 0
	}
	return m.Size()
}

// errForwardOnly is the error of a backward pass of a net planned for
// forward passes only.
var errForwardOnly = errors.New("the net was built for forward passes only (Options.ForwardOnly): its blobs share memory a backward pass would read")

// place puts u's blobs' data or diffs in m.
func (u *memUse[T]) place(n *Net[T], m *syncedmem.SyncedMemory) error {
	placeOne := func(b *blob.Blob[T]) error {
		if u.diff {
			return b.PlaceDiff(m)
		}
		return b.PlaceData(m)
	}
	for _, b := range u.buffers {
		if err := placeOne(b); err != nil {
			return err
		}
	}
	for _, id := range u.blobs {
		if err := placeOne(n.blobs[id].blob); err != nil {
			return err
		}
	}
	return nil
}

// storageOf returns the device's type for u's values: its blobs', which
// in-place sharing makes one (the precision pass), or the net's own.
func (u *memUse[T]) storageOf(n *Net[T]) syncedmem.Storage {
	for _, b := range u.buffers {
		m := b.Data()
		if u.diff {
			m = b.Diff()
		}
		if m != nil {
			return m.Storage()
		}
	}
	for _, id := range u.blobs {
		m := n.blobs[id].blob.Data()
		if u.diff {
			m = n.blobs[id].blob.Diff()
		}
		if m != nil {
			return m.Storage()
		}
	}
	return syncedmem.StorageNative
}

// workspaceUse is the layer and pass of a workspace's memory.
type workspaceUse struct {
	layer    int
	backward bool
}

// workspaceUses returns the workspaces the layers' engines need in their
// passes (layer.WorkspaceUser), each live in its pass's step alone.
func (n *Net[T]) workspaceUses(training bool) []memUse[T] {
	steps := 2 * len(n.layers)
	var uses []memUse[T]
	for i, r := range n.layers {
		w, ok := r.layer.(layer.WorkspaceUser)
		if !ok {
			continue
		}
		fwd, bwd := w.WorkspaceBytes()
		if fwd > 0 {
			uses = append(uses, memUse[T]{name: r.name + "'s forward workspace", start: i, end: i, bytes: fwd, workspace: &workspaceUse{i, false}})
		}
		if bwd > 0 && training && r.needBackward {
			uses = append(uses, memUse[T]{name: r.name + "'s backward workspace", start: steps - 1 - i, end: steps - 1 - i, bytes: bwd, workspace: &workspaceUse{i, true}})
		}
	}
	return uses
}

// giveWorkspaces hands the layers their placed workspaces.
func (n *Net[T]) giveWorkspaces() {
	type pair struct{ fwd, bwd *syncedmem.SyncedMemory }
	given := map[int]pair{}
	for i := range n.uses {
		u := &n.uses[i]
		if u.workspace == nil || u.mem == nil {
			continue
		}
		p := given[u.workspace.layer]
		if u.workspace.backward {
			p.bwd = u.mem
		} else {
			p.fwd = u.mem
		}
		given[u.workspace.layer] = p
	}
	for i, p := range given {
		n.layers[i].layer.(layer.WorkspaceUser).SetWorkspace(p.fwd, p.bwd)
	}
}

// label names u for the memory report: "conv1 data", "bn1's xNorm diff".
func (u *memUse[T]) label(n *Net[T]) string {
	if u.workspace != nil {
		return u.name
	}
	what := " data"
	if u.diff {
		what = " diff"
	}
	if u.buffers != nil {
		return u.name + what
	}
	return n.blobs[u.blobs[0]].name + what
}

// gpuBackwardReadsAsHost are the types whose GPU halves read in their
// backward passes what their host halves read (layer.Spec.BackwardReads):
// their GPU code was checked. Every other type's GPU backward pass is
// taken to read both bottoms and tops, unless the layer says otherwise
// (layer.DeviceBackwardReader: BatchNorm) or is computed by the layer
// before it (below): cuDNN's activations read x and y where the host's
// ReLU reads x alone, its pooling x and y where the host keeps an argmax.
var gpuBackwardReadsAsHost = map[string]bool{
	"Convolution": true, "InnerProduct": true, "Split": true, "Concat": true, "Slice": true,
	"Flatten": true, "Reshape": true, "Dropout": true, "SoftmaxWithLoss": true,
}

// backwardReads returns what layer i's backward pass reads on the net's
// device.
func (n *Net[T]) backwardReads(i int) layer.BackwardUse {
	l := n.layers[i].layer
	if !n.ctx.OnGPU() {
		return n.hostBackwardReads(i)
	}
	if gpuBackwardReadsAsHost[l.Type()] {
		return layer.BackwardReadsOf(l)
	}
	if r, ok := l.(layer.DeviceBackwardReader); ok {
		if reads, ok := r.DeviceBackwardReads(); ok {
			return reads
		}
	}
	base := l.LayerBase()
	if by, forwardOnly := base.ComputedBy(); by != nil && !forwardOnly && base.ComputedNow() && i > 0 {
		// Its backward pass is the layer before's (a Scale and a ReLU
		// after a BatchNorm, a ReLU after a sum), which says what that
		// reads: in place, these layers' bottoms and tops are its top.
		return n.backwardReads(i - 1)
	}
	if l.Type() == "Eltwise" && base.Param().GetEltwiseParam().GetOperation() == caffepb.EltwiseParameter_SUM {
		// The sum's gradient is dy, its fused ReLU's mask y > 0.
		return layer.BackwardReadsTop
	}
	return layer.BackwardReadsBoth
}

// hostBackwardReads returns what layer i's backward pass reads on the
// host: what its type's does, and where it computes the passes of the
// layers after it (layer.Fuse: a BatchNorm's Scale and ReLU, in place on
// its top) what theirs do, which is its top's data: the ReLU's mask, read
// in the BatchNorm's backward step, after the ReLU's own.
func (n *Net[T]) hostBackwardReads(i int) layer.BackwardUse {
	l := n.layers[i].layer
	reads := layer.BackwardReadsOf(l)
	for j := i + 1; j < len(n.layers); j++ {
		by, forwardOnly := n.layers[j].layer.LayerBase().ComputedBy()
		if by != l || forwardOnly {
			break
		}
		if layer.BackwardReadsOf(n.layers[j].layer) == layer.BackwardReadsNeither {
			continue
		}
		switch reads {
		case layer.BackwardReadsNeither:
			reads = layer.BackwardReadsTop
		case layer.BackwardReadsBottom:
			reads = layer.BackwardReadsBoth
		}
	}
	return reads
}

// bufferUses returns the memories of the layers' own blobs that they let
// the plan place (layer.BufferLister): saved values live from the layer's
// forward step to its backward step (its forward step alone without
// backward passes), backward scratch in its backward step.
func (n *Net[T]) bufferUses(training bool) []memUse[T] {
	steps := 2 * len(n.layers)
	var uses []memUse[T]
	// copied: the use of the previous layer's copy of its top 0 after its
	// forward pass (layer.CopyOfTopAfter), which the next layer's copy of
	// the same blob before its own (CopyOfBottomBefore) may share.
	copied, copiedAt := -1, -1
	for i, r := range n.layers {
		bl, ok := r.layer.(layer.BufferLister[T])
		if !ok {
			continue
		}
		backward := training && r.needBackward
		for _, b := range bl.Buffers(r.bottoms, r.tops) {
			for _, diff := range []bool{false, true} {
				use, m := b.Data, b.Blob.Data()
				if diff {
					use, m = b.Diff, b.Blob.Diff()
				}
				u := memUse[T]{buffers: []*blob.Blob[T]{b.Blob}, name: fmt.Sprintf("%s's %s", r.name, b.Name), diff: diff, bytes: memBytes(m), start: steps, end: -1}
				switch {
				case use == layer.BufferSaved && backward:
					u.start, u.end = i, steps-1-i
				case use == layer.BufferSaved:
					u.start, u.end = i, i
				case use == layer.BufferForwardScratch:
					u.start, u.end = i, i
				case use == layer.BufferBackwardScratch && backward:
					u.start, u.end = steps-1-i, steps-1-i
				default:
					continue
				}
				if m == nil || u.bytes == 0 || m.Shared() {
					u.kept = "a layer's own"
				}
				if !diff && b.Copy == layer.CopyOfBottomBefore && u.kept == "" && copied >= 0 && copiedAt == i-1 &&
					len(r.bottoms) > 0 && len(n.layers[i-1].tops) > 0 && r.bottoms[0] == n.layers[i-1].tops[0] && b.Blob.Count() == r.bottoms[0].Count() {
					// The same values as the layer before's copy: one memory.
					c := &uses[copied]
					c.buffers = append(c.buffers, b.Blob)
					c.name += " = " + u.name
					c.start, c.end, c.bytes = min(c.start, u.start), max(c.end, u.end), max(c.bytes, u.bytes)
					copied = -1
					continue
				}
				if !diff && b.Copy == layer.CopyOfTopAfter && u.kept == "" && len(r.tops) > 0 && b.Blob.Count() == r.tops[0].Count() {
					copied, copiedAt = len(uses), i
				}
				uses = append(uses, u)
			}
		}
	}
	return uses
}

var simGPU bool
