package vision

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Sibling convolutions of an inference plan's fold (layer.SiblingFolder):
// convolutions of one window reading the same bottom, such as SSD's box
// and class heads on each feature map, are computed by the first of them,
// the lead, as one convolution with their outputs stacked: one im2col of
// the bottom and one GEMM (or one Winograd pass) instead of one each.
// Alone, a head of few outputs wasted most of its time: a GEMM of 16 rows
// reads the 4608-row columns for little (MobileNet-SSD's conv11_mbox_loc,
// 512 to 16 channels at 19x19, took 3.2 ms of a 42 ms pass and its class
// head of 84 outputs 2.1; the two stacked 2.2).
//
// The lead writes its own rows into its top and keeps its siblings' in a
// buffer of its own until each sibling's pass copies its rows from there
// (handOff): a sibling's top is reshaped at its own turn. A sibling whose
// turn finds no such result (a partial pass that starts after the lead),
// the bottom written since, or its own fold made again, computes its pass
// itself, as it does when unfolded.

// convSiblings is a lead's state: its siblings, their stacked forms and
// the last pass's stacked outputs.
type convSiblings[T layer.Float] struct {
	others []*convBase[T]
	// offs[i] is member i's first output channel in the stack (the lead
	// is member 0, others[k] member k+1); the last is their total.
	offs []int
	// gens are the members' fold generations (convFold.gen) the forms
	// below were made at; fits says those folds stack (one activation).
	gens []uint64
	fits bool
	// The stacked folded weights, packed for the im2col way and
	// transformed for the Winograd way, each made by the first pass that
	// takes its way; the stacked bias in eps[0].
	packed []*mathfn.PackedA[T]
	wino   *mathfn.Winograd[T]
	eps    []mathfn.Epilogue[T]
	// The last pass's stacked outputs (per image, offs[last] channels),
	// the siblings that have not taken theirs yet, and what it read: the
	// bottom's memory, its write count then, and the shape.
	y            []T
	ready        []bool
	src          *syncedmem.SyncedMemory
	writes       uint64
	num, spatial int
}

// conv gives Sibling and SetSiblings the convolution behind a layer.
func (l *convBase[T]) conv() *convBase[T] { return l }

// Sibling reports whether the layer's folded pass can compute other's
// too (layer.SiblingFolder): a convolution of the same window over as many
// input channels, both in one group over axis 1 and not 1x1 (stacks),
// folded with the same activation (one epilogue), neither a lead or a
// sibling already.
func (l *convBase[T]) Sibling(other layer.Layer[T]) bool {
	c, ok := other.(interface{ conv() *convBase[T] })
	if !ok {
		return false
	}
	o := c.conv()
	return o != l && l.lead == nil && o.lead == nil && o.sib == nil && l.stacks() && o.stacks() &&
		l.fold.active && o.fold.active && o.fold.ep.ReLU == l.fold.ep.ReLU && o.fold.ep.Slope == l.fold.ep.Slope &&
		o.channels == l.channels && o.numSpatial == l.numSpatial && o.geo.ForceND == l.geo.ForceND &&
		slices.Equal(o.kernel, l.kernel) && slices.Equal(o.stride, l.stride) &&
		slices.Equal(o.pad, l.pad) && slices.Equal(o.dilation, l.dilation)
}

// stacks says the layer's outputs are one GEMM's rows over columns that
// im2col makes: a convolution over axis 1 in one group, not depthwise,
// not 1x1. 1x1 convolutions read their bottom as the columns, so
// stacking them saves only the GEMM's packing of it: GoogLeNet's
// inception 1x1 trios at batch 1, alone -> stacked in ms, two rounds on
// the shared 2-vCPU machine (load 2.6-3): 3a 0.76 -> 0.71, 1.17 -> 1.24;
// 4a 0.87 -> 1.29, 1.39 -> 1.19; 5b 1.28 -> 1.26, 1.23 -> 0.93, within
// its noise either way, where SSD's 3x3 heads gained 20-80%
// (BenchmarkConvSiblings).
func (l *convBase[T]) stacks() bool {
	return !l.reverse && l.channelAxis == 1 && l.group == 1 && !l.depthwise && !l.dwApplies() && !l.is1x1
}

// SetSiblings makes the layer's folded passes compute others' too, from
// its next pass (layer.SiblingFolder); none returns each to its own.
func (l *convBase[T]) SetSiblings(others []layer.Layer[T]) error {
	if l.sib != nil {
		for _, o := range l.sib.others {
			o.lead = nil
		}
		l.sib = nil
	}
	if len(others) == 0 {
		return nil
	}
	if !l.stacks() {
		return errNoSiblings
	}
	s := &convSiblings[T]{ready: make([]bool, len(others))}
	for _, other := range others {
		c, ok := other.(interface{ conv() *convBase[T] })
		if !ok || !l.Sibling(other) || slices.Contains(s.others, c.conv()) {
			return fmt.Errorf("layer %q is not a sibling of %q: another window, type or input, or one listed twice", other.LayerBase().Name(), l.Name())
		}
		s.others = append(s.others, c.conv())
	}
	for k, o := range s.others {
		o.lead, o.leadIdx = l, k
	}
	l.sib = s
	return nil
}

// siblingsReady says whether this pass computes the siblings too: one
// bottom, every sibling folded, and their folds stacking. It stacks them
// again where a member's fold was made again since.
func (l *convBase[T]) siblingsReady(bottom []*blob.Blob[T]) bool {
	s := l.sib
	if len(bottom) != 1 {
		return false
	}
	for _, o := range s.others {
		if !o.fold.active {
			return false
		}
	}
	if !s.current(l) {
		s.restack(l)
	}
	return s.fits
}

// current says the stacked forms were made from the members' folds as
// they are.
func (s *convSiblings[T]) current(l *convBase[T]) bool {
	if len(s.gens) != len(s.others)+1 || s.gens[0] != l.fold.gen {
		return false
	}
	for k, o := range s.others {
		if s.gens[k+1] != o.fold.gen {
			return false
		}
	}
	return true
}

// restack records the members' folds: their offsets, the stacked bias
// and the epilogue, which stack only where every member applies the
// lead's activation. The weights' forms are made by the first pass that
// takes their way.
func (s *convSiblings[T]) restack(l *convBase[T]) {
	members := append([]*convBase[T]{l}, s.others...)
	s.gens, s.offs = s.gens[:0], append(s.offs[:0], 0)
	s.fits = true
	anyBias := false
	for _, m := range members {
		s.gens = append(s.gens, m.fold.gen)
		s.offs = append(s.offs, s.offs[len(s.offs)-1]+m.numOutput)
		s.fits = s.fits && m.fold.ep.ReLU == l.fold.ep.ReLU && m.fold.ep.Slope == l.fold.ep.Slope
		anyBias = anyBias || m.fold.b != nil
	}
	ep := mathfn.Epilogue[T]{ReLU: l.fold.ep.ReLU, Slope: l.fold.ep.Slope}
	if anyBias {
		ep.RowBias = make([]T, s.offs[len(s.offs)-1])
		for i, m := range members {
			copy(ep.RowBias[s.offs[i]:], m.fold.b) // nil: zeros
		}
	}
	s.eps = []mathfn.Epilogue[T]{ep}
	s.packed, s.wino = nil, nil
	clear(s.ready)
}

// stacked returns the members' weights one after another and the fold's
// scale of each output (1 where a member's fold has none): the source of
// the packed and transformed forms, made for them and then dropped.
func (s *convSiblings[T]) stacked(l *convBase[T]) ([]T, []float64) {
	outs := s.offs[len(s.offs)-1]
	w, scale := make([]T, 0, outs*l.kernelDim), make([]float64, 0, outs)
	for _, m := range append([]*convBase[T]{l}, s.others...) {
		w = append(w, m.Blobs()[0].CPUData()...)
		if m.fold.scale != nil {
			scale = append(scale, m.fold.scale...)
			continue
		}
		for range m.numOutput {
			scale = append(scale, 1)
		}
	}
	return w, scale
}

// forwardMerged is the lead's folded pass with its siblings: the stacked
// outputs into s.y, the lead's rows into its top; the siblings' wait for
// their turn (handOff).
func (l *convBase[T]) forwardMerged(bottom, top []*blob.Blob[T]) error {
	s := l.sib
	outs := s.offs[len(s.offs)-1]
	dim := outs * l.convOutSpatial
	if cap(s.y) < l.num*dim {
		s.y = make([]T, l.num*dim)
	}
	s.y = s.y[:l.num*dim]
	clear(s.ready)
	if err := l.stackedPass(bottom, outs, dim); err != nil {
		return err
	}
	copyRows(top[0].MutableCPUData(), s.y, l.num, 0, l.topDim, dim)
	s.src, s.num, s.spatial = bottom[0].Data(), l.num, l.convOutSpatial
	s.writes = s.src.Writes()
	for k := range s.ready {
		s.ready[k] = true
	}
	return nil
}

// stackedPass computes the stacked outputs, by Winograd's way where it
// beats im2col's for all the outputs.
func (l *convBase[T]) stackedPass(bottom []*blob.Blob[T], outs, dim int) error {
	s := l.sib
	if l.fold.winoOK && l.winoWins(outs) {
		if s.wino == nil {
			w, scale := s.stacked(l)
			wino, err := mathfn.NewWinogradScaled(outs, l.channels, w, scale)
			if err != nil {
				return err
			}
			s.wino = wino
		}
		if err := s.wino.Reshape(l.num, l.geo.In[0], l.geo.In[1], l.pad[0], l.pad[1]); err != nil {
			return err
		}
		s.wino.Forward(bottom[0].CPUData(), s.y, &s.eps[0])
		return nil
	}
	if s.packed == nil {
		w, scale := s.stacked(l)
		s.packed = []*mathfn.PackedA[T]{mathfn.PackAScaled(outs, l.kernelDim, w, scale)}
	}
	t := &l.cpu.target
	t.packed, t.eps, t.dim, t.ys = s.packed, s.eps, dim, append(t.ys[:0], s.y)
	l.foldedIm2col(bottom)
	return nil
}

// handOff copies sibling o's rows of the lead's last stacked pass into
// its top, and reports whether it did: only where that pass read the
// bottom o reads now, unwritten since, with o's fold as it is.
func (l *convBase[T]) handOff(o *convBase[T], bottom, top []*blob.Blob[T]) bool {
	s, k := l.sib, o.leadIdx
	if s == nil || k >= len(s.ready) || s.others[k] != o || !s.ready[k] || len(bottom) != 1 {
		return false
	}
	if m := bottom[0].Data(); m == nil || m != s.src || m.Writes() != s.writes ||
		o.fold.gen != s.gens[k+1] || o.num != s.num || o.convOutSpatial != s.spatial {
		return false
	}
	s.ready[k] = false
	copyRows(top[0].MutableCPUData(), s.y, o.num, s.offs[k+1]*s.spatial, o.topDim, s.offs[len(s.offs)-1]*s.spatial)
	return true
}

// copyRows copies num images of n elements each from src, stride apart
// from offset off, to dst, where they are n apart.
func copyRows[T layer.Float](dst, src []T, num, off, n, stride int) {
	for i := range num {
		copy(dst[i*n:(i+1)*n], src[i*stride+off:i*stride+off+n])
	}
}

// errNoSiblings is SetSiblings' answer for a layer that cannot lead.
var errNoSiblings = errors.New("a deconvolution, a grouped, depthwise or 1x1 convolution computes no siblings")
