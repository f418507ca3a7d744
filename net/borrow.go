package net

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
)

// BorrowActivations lets n's computed blobs use the data memory of from's
// (BorrowData), for a test net that only ever runs between from's
// iterations: from's activations are dead then, and its next forward pass
// overwrites them. Each of from's blobs lends to at most one of n's,
// largest to largest. Only blobs that a layer with bottoms computes take
// part on either side: what a source layer (Input, DummyData with a
// constant filler, Parameter, the data layers) writes can outlive a pass;
// and only blobs with memory of their own: a Split's or Flatten's tops
// alias their bottom, and one memory lent twice would hold two live blobs.
// Several test nets may borrow from one train net: they run one at a time.
// It returns the bytes lent; n's remaining blobs keep their own memory.
// Call it after both nets are built; the borrowers' own memory, and what
// it holds, is released.
func (n *Net[T]) BorrowActivations(from *Net[T]) (int, error) {
	lenders, borrowers := from.computedBlobs(), n.computedBlobs()
	slices.SortStableFunc(lenders, func(a, b *blob.Blob[T]) int { return cmp.Compare(b.Capacity(), a.Capacity()) })
	slices.SortStableFunc(borrowers, func(a, b *blob.Blob[T]) int { return cmp.Compare(b.Count(), a.Count()) })
	lent := 0
	for _, b := range borrowers {
		if len(lenders) == 0 || lenders[0].Capacity() < b.Count() || b.Count() == 0 {
			continue
		}
		if err := b.BorrowData(lenders[0]); err != nil {
			continue // on another device: it keeps its own
		}
		var zero T
		lent += b.Count() * int(unsafe.Sizeof(zero))
		lenders = lenders[1:]
	}
	n.planBorrow(from, lent)
	return lent, nil
}

// computedBlobs returns the distinct top blobs whose first writer has
// bottoms and whose data memory is their own.
func (n *Net[T]) computedBlobs() []*blob.Blob[T] {
	seen := map[*blob.Blob[T]]bool{}
	var out []*blob.Blob[T]
	for _, l := range n.layers {
		for _, t := range l.tops {
			if seen[t] {
				continue
			}
			seen[t] = true
			if len(l.bottoms) > 0 && t.Data() != nil && !t.Data().Shared() {
				out = append(out, t)
			}
		}
	}
	return out
}
