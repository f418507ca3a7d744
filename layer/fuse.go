package layer

import (
	"slices"

	"github.com/gocaffe/gocaffe/blob"
)

// Fuser is implemented by layers whose engines can compute the passes of
// the layer after them as part of their own: the types whose Spec lists
// FusesNext. Four pairs are fused today (see each FuseNext):
//   - BatchNorm, then a Scale in place on its top (the Caffe ResNet and
//     MobileNet pattern), on cuDNN and on the host;
//   - BatchNorm, or a Scale fused into one, then a ReLU in place on the
//     same blob, on cuDNN and on the host;
//   - Eltwise SUM of two bottoms on the GPU engine, then a ReLU in place
//     on its top (ResNet's residual additions);
//   - Convolution with a bias on the cuDNN engine, then a ReLU in place on
//     its top: the forward pass only.
type Fuser[T Float] interface {
	// FuseNext makes the layer's engine compute next's passes where it
	// can, and reports whether it will. next is a layer of a type the
	// layer's spec lists, in place on the single top of via, the layer
	// just before it: the receiver itself, or a layer the receiver already
	// computes (a Scale fused into BatchNorm). needBackward says whether
	// the net runs the receiver's backward pass, which must then compute
	// next's too. An implementation marks next with Base.FusedInto.
	FuseNext(next, via Layer[T], needBackward bool) bool
}

// Fuse lets layer a, or the layer that already computes a's passes,
// compute layer b, the next in its net, as part of its own passes where
// its engine can, and reports whether it will. A net's plan offers it each
// pair of consecutive layers once they are set up: b must be in place on
// a's single top, of a type the computing layer's Spec.FusesNext lists.
//
// A fusion holds only while the engine computes the pass the way it needs:
// each pass asks the function given to FusedInto, and otherwise the layers
// run as written, so every blob's data and diff are what the two layers
// would have left, as in Caffe.
func Fuse[T Float](a, b Layer[T], aTop, bBottom, bTop []*blob.Blob[T], needBackward bool) bool {
	if len(bBottom) != 1 || len(bTop) != 1 || len(aTop) != 1 || bBottom[0] != aTop[0] || bTop[0] != bBottom[0] {
		return false
	}
	host := a
	if by := a.LayerBase().fusedInto; by != nil {
		host = by
	}
	s := specOf(host)
	if s == nil || !slices.Contains(s.FusesNext, b.Type()) {
		return false
	}
	f, ok := host.(Fuser[T])
	return ok && f.FuseNext(b, a, needBackward)
}

// FusedInto marks the layer's passes as computed by layer by, the layer
// before it (or the one computing that layer's), whenever computes says so
// at the start of a pass: the layer's own engine is then skipped. With
// forwardOnly, only the forward pass is: the layer's backward pass runs as
// written (a ReLU after a convolution reads its output, which the fused
// pass wrote).
func (b *Base[T]) FusedInto(by Layer[T], computes func() bool, forwardOnly bool) {
	if forwardOnly {
		b.forwardFusedBy, b.forwardFusedInto = computes, by
		return
	}
	b.fusedBy, b.fusedInto = computes, by
}

// ComputedBy returns the layer whose engine computes this one's passes
// (FusedInto), and whether only the forward pass; nil when none. Each pass
// still asks whether the fusion holds (its shape, its engine's choice).
func (b *Base[T]) ComputedBy() (by Layer[T], forwardOnly bool) {
	if b.fusedInto != nil {
		return b.fusedInto, false
	}
	return b.forwardFusedInto, b.forwardFusedInto != nil
}

// ComputedNow says whether the layer's passes, forward and backward, are
// computed by the layer it is fused into at the current shapes (the
// fusion's condition holds and no partial pass suspends it).
func (b *Base[T]) ComputedNow() bool { return b.fusedBy != nil && b.fusedBy() }

// EngineOnGPU says whether the engine SetUp chose computes on the GPU
// (else the layer runs its CPU half, on the host or, in GPU mode, through
// its blobs' synced memory).
func (b *Base[T]) EngineOnGPU() bool { return b.engineOnGPU }

// FusionSuspended says a partial pass of the net (SuspendFusion) has the
// layer compute its own passes only, not the next layer's it was fused
// with.
func (b *Base[T]) FusionSuspended() bool { return b.fusionSuspended }

// ForwardSkipped says the layer's last forward pass was computed by the
// layer it is fused into: what its own forward pass saves for its backward
// pass was not saved.
func (b *Base[T]) ForwardSkipped() bool { return b.forwardSkipped }

// Engine returns the engine SetUp chose for the layer on its context
// (nil before SetUp).
func (b *Base[T]) Engine() Engine[T] { return b.engine }
