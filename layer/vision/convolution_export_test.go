package vision

import (
	"github.com/gocaffe/gocaffe/layer"
)

// ConvGEMMWay reports the way of our own GEMMs a cuDNN Convolution has
// (convolution_ways.go: "pointwise", "depthwise", "lowered" or "" for
// none) and which
// passes take it: forward, bottom gradient, weight gradient.
func ConvGEMMWay[T layer.Float](l layer.Layer[T]) (string, [3]bool) {
	e, ok := l.LayerBase().Engine().(*convolutionDNN[T])
	if !ok {
		return "", [3]bool{}
	}
	switch e.way.(type) {
	case *pointwiseConv[T]:
		return "pointwise", e.use
	case *depthwiseConv[T]:
		return "depthwise", e.use
	case *loweredConv[T]:
		return "lowered", e.use
	}
	return "", e.use
}

// SetLoweredBudget bounds the workspace of the lowered way's chunks to
// bytes until the returned function restores the bound.
func SetLoweredBudget(bytes int) (restore func()) {
	old := loweredBudget
	loweredBudget = bytes
	return func() { loweredBudget = old }
}

// SetPointwiseBudget bounds the partial weight gradients of 1x1 layers to
// bytes until the returned function restores the bound.
func SetPointwiseBudget(bytes int) (restore func()) {
	old := pointwiseBudget
	pointwiseBudget = bytes
	return func() { pointwiseBudget = old }
}

// SetWinogradAlways makes every folded convolution that fits take the
// Winograd way whatever its shape (on) or keeps the shape rule (off)
// until the returned function restores the setting.
func SetWinogradAlways(on bool) (restore func()) {
	old := winoAlways
	winoAlways = on
	return func() { winoAlways = old }
}

// UsesWinograd reports whether a folded convolution's next pass takes the
// Winograd way.
func UsesWinograd[T layer.Float](l layer.Layer[T]) bool {
	c, ok := l.(*convolutionLayer[T])
	return ok && c.fold.active && c.fold.winoOK && c.winoWins(c.numOutput)
}

// FoldHolds reports what a folded convolution holds of its weights beside
// the layer's own: a folded copy, how many groups' packed panels and
// whether any of those keeps an unpacked matrix too, and Winograd's
// transformed filters.
func FoldHolds[T layer.Float](l layer.Layer[T]) (folded bool, packed int, unpacked, wino bool) {
	c := l.(*convolutionLayer[T])
	for _, p := range c.fold.packed {
		unpacked = unpacked || p.OwnsUnpacked()
	}
	return c.fold.w != nil, len(c.fold.packed), unpacked, c.fold.wino != nil
}

// SetConvChunks sets the column bytes a piece of the host's chunked
// passes aims at and its fewest positions (conv_chunks.go) until the
// returned function restores them.
func SetConvChunks(bytes, columns int) (restore func()) {
	oldBytes, oldColumns := convChunkBytes, convChunkColumns
	convChunkBytes, convChunkColumns = bytes, columns
	return func() { convChunkBytes, convChunkColumns = oldBytes, oldColumns }
}

// SetConvPackBackward turns the host backward pass's packing of the
// transposed weights (conv_backward_packed.go) on or off until the
// returned function restores it.
func SetConvPackBackward(on bool) (restore func()) {
	old := convPackBackward
	convPackBackward = on
	return func() { convPackBackward = old }
}

// SiblingsPending reports, for a lead convolution (layer.SiblingFolder),
// which siblings have yet to take their outputs from its last pass; nil
// for a layer that leads none.
func SiblingsPending[T layer.Float](l layer.Layer[T]) []bool {
	c, ok := l.(*convolutionLayer[T])
	if !ok || c.sib == nil {
		return nil
	}
	return append([]bool(nil), c.sib.ready...)
}

// SetConvPanels turns the host passes without a column buffer
// (conv_panels.go) on or off until the returned function restores them.
func SetConvPanels(on bool) (restore func()) {
	old := convPanels
	convPanels = on
	return func() { convPanels = old }
}
