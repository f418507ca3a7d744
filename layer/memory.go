package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// BackwardUse says which of a layer's bottoms' and tops' data its backward
// pass reads (Spec.BackwardReads), for a net's memory plan (package net,
// the "liveness" pass), which keeps a blob's data only while a later
// forward pass or some backward pass still reads it. The zero value,
// BackwardReadsBoth, is what a net assumes of a type that does not say:
// a type that says less lets the net reuse that memory once the forward
// pass is past it.
type BackwardUse uint8

// The uses.
const (
	// BackwardReadsBoth: the bottoms' and the tops' data (an element-wise
	// product).
	BackwardReadsBoth BackwardUse = iota
	// BackwardReadsBottom: the bottoms' data only (a convolution's and an
	// inner product's weight gradient, ReLU's sign).
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

// BackwardReadsOf returns what l's backward pass on the host reads, as its
// type's spec says for its parameter: BackwardReadsBoth for a type that
// does not say and for a layer the registry did not make.
func BackwardReadsOf[T Float](l Layer[T]) BackwardUse {
	if s := specOf(l); s != nil && s.BackwardReads != nil {
		return s.BackwardReads(l.LayerBase().Param())
	}
	return BackwardReadsBoth
}

// DeviceBackwardReader is implemented by layers whose engine on the
// device reads other data in its backward pass than the type's host half
// (Spec.BackwardReads) says, to tell a net's memory plan what: ok false
// when the layer cannot say for its current engine and shapes.
type DeviceBackwardReader interface {
	DeviceBackwardReads() (reads BackwardUse, ok bool)
}

// TopDataExchanger is implemented by layers whose engine, in place on a
// top whose input its backward pass needs, computes the output into a
// blob of its own and exchanges the two blobs' data memories
// (blob.ExchangeData) instead of copying the input aside: BatchNorm in
// place on the GPU. From the layer's forward pass on, the top's data is
// the blob's former memory, holding the output, and the blob holds the
// input, which the backward pass reads. RestoreTopData exchanges them back
// (it does nothing when they are not exchanged); a net calls it before
// the layer that makes the top runs its forward pass again, so that each
// memory holds one kind of value in every pass and the net's memory plan
// can place both: the top's memory from the maker's forward pass to this
// layer's backward pass, the blob's from this layer's forward pass to the
// output's last use. A forward pass that finds them still exchanged (the
// net did not restore them) copies the input aside instead.
type TopDataExchanger[T Float] interface {
	// ExchangeBlob returns the blob whose data the forward pass exchanges
	// with top 0's, or nil when the pass does not exchange (not in place,
	// or its backward pass needs no input).
	ExchangeBlob() *blob.Blob[T]
	RestoreTopData() error
}

// WorkspaceUser is implemented by layers whose engine needs device scratch
// memory (a workspace) within its forward or backward pass, for a net's
// memory plan to place it among the activations at that pass's step
// instead of the context keeping the largest for the whole run:
// WorkspaceBytes says the bytes each pass needs for the current shapes
// (0: none), SetWorkspace gives the engine memory of at least those bytes
// for each (nil: the context's shared workspace). An engine whose need
// grows later takes the context's.
type WorkspaceUser interface {
	WorkspaceBytes() (forward, backward int)
	SetWorkspace(forward, backward *syncedmem.SyncedMemory)
}

// BufferUse says when the values in a layer's own memory (a blob's data
// or diff that is no net blob) matter, for a host net's memory plan to
// place that memory among its blobs' (BufferLister).
type BufferUse uint8

// The uses.
const (
	// BufferOwn, the zero value: the layer keeps the memory to itself.
	BufferOwn BufferUse = iota
	// BufferSaved: the forward pass writes it before reading it, the
	// backward pass reads it (and may overwrite it); nothing else reads
	// it. In a net that runs no backward pass it is the forward pass's
	// scratch.
	BufferSaved
	// BufferBackwardScratch: only the backward pass uses it, writing it
	// before reading it.
	BufferBackwardScratch
	// BufferForwardScratch: only the forward pass uses it, writing it
	// before reading it.
	BufferForwardScratch
)

// Buffer is a blob of a layer's own whose memory a net may place among
// its blobs' (BufferLister): its data's and its diff's uses.
type Buffer[T Float] struct {
	Name       string // for the net's memory report: "xNorm"
	Blob       *blob.Blob[T]
	Data, Diff BufferUse
	// Copy says that saved data is an exact copy of one of the layer's
	// blobs' data, which no pass of the layer changes afterwards: a net
	// may then give one memory to a layer's copy of its top after the
	// forward pass (BatchNorm's output) and the next layer's copy of the
	// same blob as its bottom before its forward pass (a Scale in place
	// after it), which hold the same values.
	Copy BufferCopy
}

// BufferCopy is what a saved buffer copies (Buffer.Copy).
type BufferCopy uint8

// The copies.
const (
	CopyOfNothing      BufferCopy = iota
	CopyOfTopAfter                // top 0's data after the forward pass
	CopyOfBottomBefore            // bottom 0's data before the forward pass
)

// BufferLister is implemented by layers with blobs of their own that a
// host net may place among its blobs' memory: the values a forward pass
// keeps for the backward pass, and a backward pass's scratch. The answer
// is for the bottoms and tops given, on the host (the layer's CPU half);
// a net asks after SetUp. Buffers left out stay the layer's own.
type BufferLister[T Float] interface {
	Buffers(bottom, top []*blob.Blob[T]) []Buffer[T]
}
