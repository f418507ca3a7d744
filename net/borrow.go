package net

import (
	"cmp"
	"slices"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// BorrowActivations lets n compute in from's activation memory, for a
// test net that only ever runs between from's iterations: from's
// activations are dead then, and its next forward pass overwrites them.
// The lenders are from's memories that only its computed blobs use: the
// arena of its plan's liveness pass and the data memory of its own of each
// other blob a layer with bottoms computes. The borrowers are n's arena
// (every memory placed in it moves with it, to the same offset) and the
// data memory of its own of each other computed blob. Each lender lends to at most one borrower,
// largest to largest, and only memory that holds the borrower. What a
// source layer (Input, DummyData with a constant filler, Parameter, the
// data layers) writes takes no part on either side: it can outlive a pass;
// nor does memory shared otherwise (a Split's or Flatten's tops alias
// their bottom). Several test nets may borrow from one train net: they run
// one at a time. It returns the bytes lent; n's remaining memory stays its
// own. Call it after both nets are built; the borrowers' own memory, and
// what it holds, is released.
func (n *Net[T]) BorrowActivations(from *Net[T]) (int, error) {
	lent := 0
	if n.arena != nil && from.arena != nil && !n.arenaLent && from.arena.Device() == n.ctx.Device() {
		var err error
		if lent, err = n.borrowArena(from.arena); err != nil {
			return lent, err
		}
	}
	lenders := from.lendable()
	slices.SortStableFunc(lenders, func(a, b *syncedmem.SyncedMemory) int { return cmp.Compare(b.Size(), a.Size()) })
	borrowers := n.borrowers()
	slices.SortStableFunc(borrowers, func(a, b borrower) int { return cmp.Compare(b.bytes, a.bytes) })
	for _, b := range borrowers {
		// The largest lender left of the borrower's storage (a 16-bit
		// memory lends to a 16-bit one only, see the precision pass), on
		// its device.
		j := slices.IndexFunc(lenders, func(m *syncedmem.SyncedMemory) bool {
			return m.Storage() == b.storage && m.Device() == n.ctx.Device()
		})
		if j < 0 || lenders[j].Size() < b.bytes || b.bytes == 0 {
			continue
		}
		if err := b.take(lenders[j]); err != nil {
			return lent, err
		}
		lent += b.bytes
		lenders = slices.Delete(lenders, j, j+1)
	}
	n.planBorrow(from, lent)
	return lent, nil
}

// borrower is memory of a net that may be replaced by a larger one.
type borrower struct {
	bytes   int
	storage syncedmem.Storage
	take    func(m *syncedmem.SyncedMemory) error
}

// lendable returns the distinct data memories of the computed blobs that
// are their own (the arena lends itself: borrowArena).
func (n *Net[T]) lendable() []*syncedmem.SyncedMemory {
	var out []*syncedmem.SyncedMemory
	for _, i := range n.computedBlobs() {
		out = append(out, n.blobs[i].blob.Data())
	}
	return out
}

// borrowers returns n's computed blobs with data memory of their own.
func (n *Net[T]) borrowers() []borrower {
	var out []borrower
	for _, i := range n.computedBlobs() {
		b := n.blobs[i].blob
		out = append(out, borrower{dataBytes(b), b.Storage(), func(m *syncedmem.SyncedMemory) error { return b.PlaceData(m) }})
	}
	return out
}

// borrowArena moves the memories placed in n's arena to the same offsets
// in arena, another net's, where they fit below its end, and the others
// to an arena of n's own, placed anew among themselves: two memories each
// use whole, in which no two uses live together overlap. It returns the
// bytes lent.
func (n *Net[T]) borrowArena(arena *syncedmem.SyncedMemory) (int, error) {
	limit := arena.Size()
	var outside []memUse[T] // copies of the uses that do not fit
	var at []int            // their indices in n.uses
	for i := range n.uses {
		if u := &n.uses[i]; u.mem != nil && u.offset+n.arenaBytes(u) > limit {
			outside, at = append(outside, *u), append(at, i)
		}
	}
	var over *syncedmem.SyncedMemory
	if total := assignOffsets(outside, n.arenaBytes); total > 0 {
		var err error
		if over, err = n.newArena(total); err != nil {
			return 0, err
		}
	}
	lent := 0
	for i := range n.uses {
		u := &n.uses[i]
		if u.mem == nil {
			continue
		}
		old, err := u.mem, error(nil)
		if k := slices.Index(at, i); k >= 0 {
			err = n.placeInArena(u, over, outside[k].offset)
		} else {
			err = n.placeInArena(u, arena, u.offset)
			lent += n.arenaBytes(u)
			u.lent = true
		}
		if err != nil {
			return lent, err
		}
		if err := old.Close(); err != nil { // a host copy of its own
			return lent, err
		}
	}
	if err := n.arena.Close(); err != nil {
		return lent, err
	}
	n.arena, n.arenaLent, n.overflow = arena, true, over
	n.giveWorkspaces() // their views moved
	return lent, nil
}

// computedBlobs returns the indices of the distinct blobs whose first
// writer has bottoms and whose data memory is their own.
func (n *Net[T]) computedBlobs() []int {
	seen := map[int]bool{}
	var out []int
	for _, l := range n.layers {
		for j, t := range l.tops {
			id := l.topIDs[j]
			if seen[id] {
				continue
			}
			seen[id] = true
			if len(l.bottoms) > 0 && t.Data() != nil && !t.Data().Shared() {
				out = append(out, id)
			}
		}
	}
	return out
}
