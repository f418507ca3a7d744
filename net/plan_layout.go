package net

import (
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/settings"
)

// planChannelsLast is the layout pass, after the precision pass has stored
// blobs in 16 bits: a group of blobs sharing memory is ordered
// channels-last (NHWC) where each is a 16-bit blob of images, channels and
// more than one position (two spatial axes), and every layer writing or
// reading any of them can compute channels-last
// (layer.AcceptsChannelsLast); the layers touching a channels-last blob
// then compute so, and reorder at their edges a blob left row-major (a
// data layer's FP32 top, a depthwise convolution's input). On the H100
// cuDNN's 16-bit convolutions ran ResNet-50's 3x3 and 14x14 shapes about
// twice as fast channels-last as row-major (BenchmarkConvLayouts). A net whose blobs
// stay row-major is left as it was. It says how many blobs it ordered so.
func (n *Net[T]) planChannelsLast() string {
	if !n.ctx.OnGPU() || n.ctx.Settings().ChannelsLast != settings.On {
		return ""
	}
	touched := n.touchingLayers()
	ordered := 0
	for _, group := range n.sharingGroups() {
		if !n.groupChannelsLast(group, touched) {
			continue
		}
		for _, id := range group {
			if err := n.blobs[id].blob.SetChannelsLast(true); err != nil {
				n.undoChannelsLast(fmt.Errorf("blob %s: %w", n.blobs[id].name, err))
				return ""
			}
			ordered++
		}
	}
	if ordered == 0 {
		return ""
	}
	layers := 0
	for _, r := range n.layers {
		if !slices.ContainsFunc(slices.Concat(r.bottomIDs, r.topIDs), func(id int) bool { return n.blobs[id].blob.ChannelsLast() }) {
			continue
		}
		if err := layer.SetChannelsLast(r.layer, true); err != nil {
			n.undoChannelsLast(err)
			return ""
		}
		layers++
		// The blob an in-place BatchNorm exchanges its top's memory with
		// holds the top's values in turn: the same order.
		if x, ok := r.layer.(layer.TopDataExchanger[T]); ok && len(r.tops) > 0 && r.tops[0].ChannelsLast() {
			if b := x.ExchangeBlob(); b != nil {
				if err := b.SetChannelsLast(true); err != nil {
					n.undoChannelsLast(fmt.Errorf("layer %s: its exchange blob: %w", r.name, err))
					return ""
				}
			}
		}
	}
	return fmt.Sprintf("%d blobs channels-last (%d layers compute so)", ordered, layers)
}

// touchingLayers returns, per blob, the layers writing or reading it.
func (n *Net[T]) touchingLayers() [][]int {
	touched := make([][]int, len(n.blobs))
	for i, r := range n.layers {
		for _, id := range slices.Concat(r.bottomIDs, r.topIDs) {
			touched[id] = append(touched[id], i)
		}
	}
	return touched
}

// groupChannelsLast says whether a group of blobs sharing memory can be
// ordered channels-last: 16-bit images with more than one position, no
// output or kept blob (their host copies are read as they are), and
// only layers that compute channels-last touching them.
func (n *Net[T]) groupChannelsLast(group []int, touched [][]int) bool {
	outputs := map[int]bool{}
	for _, id := range n.outputIDs {
		outputs[id] = true
	}
	for _, id := range group {
		b := n.blobs[id].blob
		if !b.Storage().Reduced() || b.NumAxes() != 4 || outputs[id] || n.keep[n.blobs[id].name] {
			return false
		}
		if _, _, s := b.ChannelsLastDims(); s <= 1 {
			return false
		}
		for _, i := range touched[id] {
			if !layer.AcceptsChannelsLast(n.layers[i].layer) {
				return false
			}
		}
	}
	return true
}

// undoChannelsLast returns every blob and layer to row-major order after a
// failure, which it logs: the net then runs as before the pass.
func (n *Net[T]) undoChannelsLast(why error) {
	logf.Warnf(n.log, "Net %q: channels-last order abandoned: %v", n.name, why)
	for _, r := range n.layers {
		if err := layer.SetChannelsLast(r.layer, false); err != nil {
			logf.Warnf(n.log, "Net %q: %v", n.name, err)
		}
		if x, ok := r.layer.(layer.TopDataExchanger[T]); ok {
			if b := x.ExchangeBlob(); b != nil {
				b.SetChannelsLast(false)
			}
		}
	}
	for i := range n.blobs {
		n.blobs[i].blob.SetChannelsLast(false)
	}
}
