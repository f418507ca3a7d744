package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// What a net's memory plan (package net, the "memory" pass) needs to know
// of a layer to let blobs whose values are dead share memory: which data
// its backward pass reads (Spec.BackwardReads), and which blobs of its own
// hold values only within a pass or from its forward pass to its backward
// pass (Buffers).

// BackwardUse says which of a layer's bottoms' and tops' data its backward
// pass reads. The zero value, BackwardReadsBoth, is what a net assumes of a
// type that does not say: a type that says less lets the net reuse that
// memory once the forward pass is past it.
type BackwardUse uint8

// The uses.
const (
	// BackwardReadsBoth: the bottoms' and the tops' data (an element-wise
	// product, cuDNN's pooling).
	BackwardReadsBoth BackwardUse = iota
	// BackwardReadsBottom: the bottoms' data only (a convolution's and
	// an inner product's weight gradient, ReLU's sign).
	BackwardReadsBottom
	// BackwardReadsTop: the tops' data only (sigmoid, tanh, softmax).
	BackwardReadsTop
	// BackwardReadsNeither: no bottom's or top's data (a sum, a split, a
	// concatenation, a max pooling through its saved mask).
	BackwardReadsNeither
)

// ReadsBottom reports whether the backward pass reads the bottoms' data.
func (u BackwardUse) ReadsBottom() bool { return u == BackwardReadsBoth || u == BackwardReadsBottom }

// ReadsTop reports whether the backward pass reads the tops' data.
func (u BackwardUse) ReadsTop() bool { return u == BackwardReadsBoth || u == BackwardReadsTop }

func (u BackwardUse) String() string {
	switch u {
	case BackwardReadsBoth:
		return "bottom and top"
	case BackwardReadsBottom:
		return "bottom"
	case BackwardReadsTop:
		return "top"
	case BackwardReadsNeither:
		return "neither"
	}
	return "BackwardUse(?)"
}

// Reads is the Spec.BackwardReads of a type whose backward pass reads the
// same data whatever its parameter.
func Reads(u BackwardUse) func(*caffepb.LayerParameter) BackwardUse {
	return func(*caffepb.LayerParameter) BackwardUse { return u }
}

// BackwardReadsOf returns what l's backward pass reads, as its type's spec
// says for its parameter: BackwardReadsBoth for a type that does not say
// and for a layer the registry did not make.
func BackwardReadsOf[T Float](l Layer[T]) BackwardUse {
	if s := specOf(l); s != nil && s.BackwardReads != nil {
		return s.BackwardReads(l.LayerBase().Param())
	}
	return BackwardReadsBoth
}

// BufferUse says when the values in a layer's own blob (its data or its
// diff) matter, for a net to place that memory among its blobs'.
type BufferUse uint8

// The uses.
const (
	// BufferOwn, the zero value: the layer keeps the memory to itself.
	BufferOwn BufferUse = iota
	// BufferScratch: each pass (forward or backward) writes before it
	// reads and leaves nothing another pass reads.
	BufferScratch
	// BufferSaved: the forward pass writes what the layer's backward pass
	// reads, and nothing else reads it; without a backward pass it is
	// scratch.
	BufferSaved
)

// BlobRef names one of a layer's bottoms (Top false) or tops by index.
type BlobRef struct {
	Top   bool
	Index int
}

// Buffer is a blob a layer owns whose memory a net may place among its
// blobs' (Buffers): the data's and the diff's uses.
type Buffer[T Float] struct {
	Blob       *blob.Blob[T]
	Data, Diff BufferUse
	// CopyOf, for saved data, says that the data is a copy the layer keeps
	// of one of its blobs, for its backward pass, because a later layer in
	// place would overwrite it: its tops' data after the forward pass
	// (BatchNorm's normalised output) or its bottoms' before (an in-place
	// Scale's input). The layer's passes write that data nothing but the
	// copy. A net may then give the buffer the blob's own memory, when
	// nothing overwrites it, or one memory to every buffer holding the same
	// values (BatchNorm's output, kept by the BatchNorm and by the Scale in
	// place after it).
	CopyOf *BlobRef
}

// BufferLister is implemented by layers with blobs of their own that a net
// may place among its blobs' memory (Buffer): scratch memory and the
// values a forward pass keeps for the backward pass. The answer is for the
// bottoms and tops given and the engine SetUp chose; a net asks after
// SetUp, and again after a Reshape of the net. Buffers left out stay the
// layer's own.
type BufferLister[T Float] interface {
	Buffers(bottom, top []*blob.Blob[T]) []Buffer[T]
}

// Buffers returns l's placeable buffers (BufferLister), nil for a layer
// without.
func Buffers[T Float](l Layer[T], bottom, top []*blob.Blob[T]) []Buffer[T] {
	if bl, ok := l.(BufferLister[T]); ok {
		return bl.Buffers(bottom, top)
	}
	return nil
}
