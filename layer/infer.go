package layer

import "github.com/gocaffe/gocaffe/blob"

// Inference folding: what a net's plan asks of layers to run a TEST-phase
// net as one pass per convolution or inner product (net/plan_fold.go).
// A chain of layers in place on a producer's single top, a BatchNorm with
// global statistics and a Scale (per-channel affine maps) and then a ReLU,
// is computed by the producer alone: the affine maps folded into its
// weights and bias, the activation applied as it writes its output. The
// producer's own blobs are never changed: it keeps the folded weights
// beside them.

// ActivationKind names an element-wise function a producer can apply in
// its forward pass's epilogue.
type ActivationKind int

const (
	// ActNone leaves the output as computed.
	ActNone ActivationKind = iota
	// ActReLU is y = max(x, 0) + Slope*min(x, 0) (Caffe's ReLU, leaky
	// with a slope).
	ActReLU
)

// Activation is an element-wise function applied in an epilogue.
type Activation struct {
	Kind  ActivationKind
	Slope float64 // ActReLU's negative_slope
}

// Activator is implemented by neuron layers that a producer may apply as
// its epilogue's activation: Activation returns it, and false where the
// layer as configured cannot be (an engine of its own to keep, say).
type Activator interface {
	Activation() (Activation, bool)
}

// ChannelAffine is implemented by layers whose forward pass, as set up
// now, is y = scale[c]*x + shift[c] on one bottom of the given shape, c
// the index along axis 1 (BatchNorm with global statistics, Scale with a
// learned vector on axis 1 and no second bottom). Affine reports false
// where it is not (training statistics, another axis). scale and shift
// have the channels' length and are written in float64, so that composing
// maps rounds once.
type ChannelAffine[T Float] interface {
	Affine(bottom []int, scale, shift []float64) bool
	// AffineSources are the blobs the map is computed from: when none of
	// their data has been written since (blob data's Writes), the map
	// still holds.
	AffineSources() []*blob.Blob[T]
}

// Fold is what a producer computes in place of its plain output y: per
// output channel o, Act(Scale[o]*y[o] + Shift[o]). Scale and Shift are nil
// for the identity (an activation alone).
type Fold struct {
	Scale, Shift []float64
	Act          Activation
	// NoWinograd keeps the producer on its im2col and GEMM where it
	// could take a faster way of its own that rounds differently
	// (Convolution's Winograd F(4x4, 3x3) for 3x3 filters):
	// net.Options.NoWinograd.
	NoWinograd bool
}

// Folder is implemented by the producers an inference plan folds into
// (Convolution, InnerProduct).
type Folder[T Float] interface {
	// FoldChannels returns the number of output channels (along axis 1
	// of its top) a Fold maps, or 0 where the layer as set up cannot fold
	// (several bottoms, another axis, a deconvolution).
	FoldChannels() int
	// SetFold makes the forward pass compute f from now on, with weights
	// and bias folded from the layer's blobs as they are now (or, for
	// what a layer makes lazily, as they are at its next pass: the same,
	// since the net calls it again before a pass whenever a blob the fold
	// came from has been written); nil returns to the layer's own pass.
	SetFold(f *Fold) error
	// FoldSources are the layer's blobs its folded weights are computed
	// from (weights, bias).
	FoldSources() []*blob.Blob[T]
}

// SiblingFolder is implemented by the producers whose folded pass can
// compute the folded passes of others reading the same bottom
// (Convolution: convolutions of one window, their weights stacked into
// one GEMM, so that one im2col of the bottom serves them all). A sibling
// then takes its tops from the lead's last pass where that pass read the
// bottom as it is now, and computes them itself otherwise (a partial
// pass that starts after the lead, the bottom written between).
type SiblingFolder[T Float] interface {
	Folder[T]
	// Sibling reports whether other, folded, reading the same bottom, can
	// be computed with the layer's folded pass.
	Sibling(other Layer[T]) bool
	// SetSiblings makes the layer's folded passes compute others' too;
	// none returns each to its own pass.
	SetSiblings(others []Layer[T]) error
}

// TopKeeper is implemented by layers whose tops' data may hold from one
// forward pass to the next (PriorBox, whose boxes depend on the shapes
// alone, writes them once per shape): a net's memory plan then gives
// those tops memory of their own, which no other blob writes.
type TopKeeper interface {
	KeepsTops() bool
}

// InferenceOnly is implemented by layers whose forward pass keeps, beside
// its tops, state that only their own backward pass reads (MAX pooling's
// argmax where it has no mask top). SetInferenceOnly(true) lets the
// forward pass skip that state, and compute its tops by a quicker way
// that may differ from Caffe's where the fold allows (FoldTolerance; a
// -0 for a +0): the plan's fold pass sets it on such layers of a folded
// net that never run a backward pass.
type InferenceOnly interface {
	SetInferenceOnly(on bool)
}
