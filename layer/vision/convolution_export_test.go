package vision

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/cuda"
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

// LoweredParts times, on trial memory, the parts of the lowered way of a
// cuDNN Convolution as its engine stands after Reshape (its type and
// order): the first chunk's im2col and GEMMs (forward with the inner
// dimension padded to kp and not, and the weight gradient's), and the
// whole forward and weight gradient passes, in milliseconds a run; and
// the chunks and images a chunk.
func LoweredParts(l layer.Layer[float32]) (map[string]float64, error) {
	e, ok := l.LayerBase().Engine().(*convolutionDNN[float32])
	if !ok {
		return nil, fmt.Errorf("engine %T, not cuDNN's", l.LayerBase().Engine())
	}
	p, ok := e.way.(*loweredConv[float32])
	if !ok {
		return nil, fmt.Errorf("way %T, not the lowered one", e.way)
	}
	cb := &e.l.convBase
	ctx := cb.Context()
	t, err := newTrialMemory(ctx.Device(), p.elemBytes(), cb.num*cb.bottomDim, cb.Blobs()[0].Count(), cb.num*cb.topDim, p.bytes(cb, true, true, true))
	if err != nil {
		return nil, err
	}
	defer func() {
		ctx.Synchronize()
		t.free()
	}()
	g := cb.GPU()
	b := p.parts(cb, t.ws)
	n0, nb, cols := p.chunkAt(cb, 0)
	k, bt := cb.numOutput, p.blasType()
	parts := []struct {
		name string
		f    func() error
	}{
		{"im2col", func() error {
			if p.channelsLast {
				return p.im2colCL(cb, t.x, n0, nb, b.col)
			}
			return p.im2col(cb, t.x, n0, nb, b.col)
		}},
		{"gemm_forward", func() error {
			if p.channelsLast {
				p.gemm(g, blas.NoTrans, blas.Trans, cols, k, p.kp, b.col, p.kp, 0, b.wp, p.kp, 0, 0, t.y, bt, k, 0, 1)
			} else {
				p.gemm(g, blas.NoTrans, blas.NoTrans, k, cols, p.rows, b.wp, p.kp, 0, b.col, cols, 0, 0, b.wide, bt, cols, 0, 1)
			}
			return g.Err()
		}},
		{"gemm_forward_unpadded", func() error {
			if p.channelsLast {
				p.gemm(g, blas.NoTrans, blas.Trans, cols, k, p.rows, b.col, p.kp, 0, b.wp, p.kp, 0, 0, t.y, bt, k, 0, 1)
			}
			return g.Err()
		}},
		{"gemm_filter", func() error {
			if p.channelsLast {
				p.gemm(g, blas.Trans, blas.NoTrans, k, p.kp, cols, t.y, k, 0, b.col, p.kp, 0, 0, b.part, cuda.BlasFloat, p.kp, 0, 1)
			} else {
				p.gemm(g, blas.NoTrans, blas.Trans, k, p.rows, cols, b.wide, cols, 0, b.col, cols, 0, 0, b.part, cuda.BlasFloat, p.kp, 0, 1)
			}
			return g.Err()
		}},
		{"forward", func() error { return p.forward(cb, g, t.x, t.w, t.y, t.ws) }},
		{"filter", func() error { return p.backwardFilter(cb, g, t.x, t.y, t.d, t.ws) }},
	}
	out := map[string]float64{"chunks": float64(p.chunks(cb)), "chunk": float64(p.chunk)}
	for _, part := range parts {
		ms, err := timeOnDevice(ctx, part.f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", part.name, err)
		}
		out[part.name] = float64(ms) / 3
	}
	return out, nil
}
