package net

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gocaffe/gocaffe/internal/sysmem"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// MemoryReport is the memory a net's blobs take as its plan lays them out,
// known once the net is built, before its first pass: the learnable
// parameters' data and diffs, and the activations' (the blobs' data, the
// diffs a backward pass uses and the layers' buffers they list,
// layer.BufferLister; in the liveness pass's slots or in memory of their
// own). Layers' other buffers (a convolution's column buffer) are not
// counted, nor a solver's history (momentum: one more copy of the
// parameters).
type MemoryReport struct {
	Device      string // "host", or the GPU the net runs on
	Params      int    // bytes of the learnable parameters' data and (in training) diffs
	Activations int    // bytes of the blobs' data and diffs
	// Memories are the activations' memories, largest first: the arena
	// the liveness pass places memories in (Placed), or a blob's data or
	// diff of its own.
	Memories []MemoryUse
	// Placed are the memories in the arena, by offset.
	Placed []PlacedMemory
}

// PlacedMemory is a memory in the arena of a MemoryReport: what it holds
// and the steps it is live in (a net of L layers: layer i's forward pass
// is step i, its backward pass step 2L-1-i).
type PlacedMemory struct {
	Offset, Bytes int
	First, Last   int
	What          string // "conv1 data", "bn1's output data"
}

// MemoryUse is one memory of a MemoryReport.
type MemoryUse struct {
	Bytes int
	// What names it: "arena: conv1 data, pool1 diff, ..." or "conv1 data
	// (a net output)".
	What string
}

// Total returns the bytes of the parameters and the activations.
func (r MemoryReport) Total() int { return r.Params + r.Activations }

// Format prints the totals and the n largest memories (all for n < 0).
func (r MemoryReport) Format(n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Memory plan (%s): %s = parameters %s + activations %s (layers' unlisted buffers not counted)\n",
		r.Device, mib(r.Total()), mib(r.Params), mib(r.Activations))
	for i, m := range r.Memories {
		if n >= 0 && i >= n {
			fmt.Fprintf(&sb, "  ... %d more\n", len(r.Memories)-n)
			break
		}
		fmt.Fprintf(&sb, "  %10s  %s\n", mib(m.Bytes), m.What)
	}
	if n < 0 && len(r.Placed) > 0 {
		fmt.Fprintf(&sb, "The arena (offset, bytes, steps live, memory):\n")
		for _, p := range r.Placed {
			fmt.Fprintf(&sb, "  %10s  %10s  %4d-%-4d  %s\n", mib(p.Offset), mib(p.Bytes), p.First, p.Last, p.What)
		}
	}
	return sb.String()
}

// MemoryReport returns the memory the net's blobs take as planned.
func (n *Net[T]) MemoryReport() MemoryReport {
	r := MemoryReport{Device: "host"}
	if d := n.ctx.Device(); d != nil {
		r.Device = fmt.Sprintf("GPU %d", d.Ordinal())
	}
	// The parameters' diffs only where a backward pass writes them.
	training := !n.forwardOnly && slices.ContainsFunc(n.layers, func(r layerRecord[T]) bool { return r.needBackward })
	for _, l := range n.learnable {
		r.Params += dataBytes(l.blob)
		if training {
			r.Params += dataBytes(l.blob)
		}
	}
	var placed []string
	for i := range n.uses {
		u := &n.uses[i]
		if u.start > u.end {
			continue // never used
		}
		name := u.label(n)
		if u.kept != "" {
			r.Memories = append(r.Memories, MemoryUse{n.onDevice(u.bytes, u.storage), fmt.Sprintf("%s (%s)", name, u.kept)})
			continue
		}
		placed = append(placed, name)
		r.Placed = append(r.Placed, PlacedMemory{u.offset, n.arenaBytes(u), u.start, u.end, name})
	}
	if n.arena != nil {
		if len(placed) > 6 {
			placed = append(placed[:6:6], fmt.Sprintf("and %d more", len(placed)-6))
		}
		// A borrowed arena is the other net's memory (BorrowActivations):
		// what this one holds is the part that did not fit.
		bytes, where := n.arena.Size(), ""
		if n.arenaLent {
			bytes, where = 0, " (in another net's arena"
			if n.overflow != nil {
				bytes = n.overflow.Size()
				where += fmt.Sprintf(", %s of its own", mib(bytes))
			}
			where += ")"
		}
		r.Memories = append(r.Memories, MemoryUse{bytes, "arena" + where + ": " + strings.Join(placed, ", ")})
	}
	slices.SortStableFunc(r.Placed, func(a, b PlacedMemory) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.First, b.First))
	})
	for _, m := range r.Memories {
		r.Activations += m.Bytes
	}
	slices.SortStableFunc(r.Memories, func(a, b MemoryUse) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return r
}

// LayersDeviceMemory returns, largest first, the device memory each
// layer's own blobs hold now (layer.Base.OwnBlobs, less its parameters
// and the memory the plan placed there): an engine's saved values and
// scratch, which a MemoryReport, made before the first pass allocates
// them, does not count. The context's shared workspace is not a layer's.
// It is empty for a net on the host.
func (n *Net[T]) LayersDeviceMemory() []MemoryUse {
	var r []MemoryUse
	if !n.ctx.OnGPU() {
		return r
	}
	for _, rec := range n.layers {
		base := rec.layer.LayerBase()
		held := 0
		for _, b := range base.OwnBlobs() {
			if slices.Contains(base.Blobs(), b) {
				continue
			}
			held += ownDeviceBytes(b.Data()) + ownDeviceBytes(b.Diff())
		}
		if held > 0 {
			r = append(r, MemoryUse{held, fmt.Sprintf("layer %s (%s)", rec.name, rec.layer.Type())})
		}
	}
	slices.SortStableFunc(r, func(a, b MemoryUse) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return r
}

// ownDeviceBytes is the device memory m holds for itself: none where a
// plan's slot (shared) or another's memory (borrowed) is used.
func ownDeviceBytes(m *syncedmem.SyncedMemory) int {
	if m == nil || m.Shared() || m.BorrowsDevice() {
		return 0
	}
	if _, ok := m.DeviceBuffer(); !ok {
		return 0
	}
	return m.DeviceSize()
}

// onDevice is what memory of bytes on the host, of storage s, takes where
// the net runs: half on a GPU for a 16-bit storage (the host copy, used
// only when a program reads the blob, stays FP32).
func (n *Net[T]) onDevice(bytes int, s syncedmem.Storage) int {
	if s.Reduced() && n.ctx.OnGPU() {
		return bytes / 2
	}
	return bytes
}

// CheckMemory returns an error when the plan's memory (MemoryReport) is
// more than the process can still allocate on the host, before the first
// pass allocates it: the error names the net, what the plan needs (its
// largest memory and the blobs in it), what is available and the batch
// that would fit, where the net's first input has a batch axis. A net on
// the GPU is checked against the device's free memory and what gocaffe
// holds there already (some of it may be the net's own), so a plan that
// fails the check cannot fit; one that passes may still not, with the
// libraries' own memory and cuDNN's workspace on top.
func (n *Net[T]) CheckMemory() error {
	r := n.MemoryReport()
	avail, limitedBy, ok := sysmem.Available()
	if d := n.ctx.Device(); d != nil {
		free, _, err := d.MemInfo()
		held, _ := d.MemStats()
		avail, limitedBy, ok = free+uint64(held), fmt.Sprintf("free on GPU %d, with what gocaffe holds there", d.Ordinal()), err == nil
	}
	if !ok || uint64(r.Total()) <= avail {
		return nil
	}
	largest := ""
	if len(r.Memories) > 0 {
		largest = fmt.Sprintf("; the largest: %s, %s", mib(r.Memories[0].Bytes), r.Memories[0].What)
	}
	fit := ""
	if batch := n.batch(); batch > 1 && r.Activations > 0 && uint64(r.Params) < avail {
		// Activations grow with the batch, the parameters do not.
		k := int(float64(batch) * float64(avail-uint64(r.Params)) / float64(r.Activations))
		fit = fmt.Sprintf("; at batch %d, about batch %d would fit (or keep the batch and raise iter_size)", batch, max(k, 0))
	}
	return fmt.Errorf("net %q: its memory plan needs %s (parameters %s, activations %s%s), but only %s can be allocated (%s)%s",
		n.name, sysmem.Bytes(uint64(r.Total())), sysmem.Bytes(uint64(r.Params)), sysmem.Bytes(uint64(r.Activations)), largest, sysmem.Bytes(avail), limitedBy, fit)
}

// batch returns the first axis of the first source layer's first top, 0
// when there is none.
func (n *Net[T]) batch() int {
	for _, r := range n.layers {
		if len(r.bottoms) == 0 && len(r.tops) > 0 && r.tops[0].NumAxes() > 0 {
			return r.tops[0].Shape()[0]
		}
	}
	return 0
}
