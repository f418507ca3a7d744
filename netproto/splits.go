package netproto

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// SplitLayerName is the name of the Split layer inserted after top topIndex
// (blob) of layer: "<blob>_<layer>_<topIndex>_split".
func SplitLayerName(layer, blob string, topIndex int) string {
	return fmt.Sprintf("%s_%s_%d_split", blob, layer, topIndex)
}

// SplitBlobName is the name of output k of that Split layer.
func SplitBlobName(layer, blob string, topIndex, k int) string {
	return fmt.Sprintf("%s_%s_%d_split_%d", blob, layer, topIndex, k)
}

// topRef identifies top j of layer i.
type topRef struct{ layer, top int }

// InsertSplits returns the layers with a Split layer after every top that
// more than one bottom reads (a top that is also a loss, with an explicit
// non-zero loss_weight, counts as one more reader), and those bottoms
// renamed to the split's outputs in order. In-place use does not count:
// a bottom reads the last top of its name. A bottom no earlier layer
// produces is an error.
func InsertSplits(layers []*caffepb.LayerParameter) ([]*caffepb.LayerParameter, error) {
	lastTop := map[string]topRef{}
	source := map[topRef]topRef{} // (layer, bottom) -> the top it reads
	readers := map[topRef]int{}
	lossWeight := map[topRef]float32{}
	for i, l := range layers {
		for j, name := range l.Bottom {
			src, ok := lastTop[name]
			if !ok {
				return nil, fmt.Errorf("unknown bottom blob %q (layer %q, bottom index %d): no earlier layer produces it", name, l.GetName(), j)
			}
			source[topRef{i, j}] = src
			readers[src]++
		}
		for j, name := range l.Top {
			lastTop[name] = topRef{i, j}
		}
		for j := range min(len(l.LossWeight), len(l.Top)) {
			ref := lastTop[l.Top[j]]
			lossWeight[ref] = l.LossWeight[j]
			if l.LossWeight[j] != 0 {
				readers[ref]++
			}
		}
	}
	next := map[topRef]int{} // next split output to hand out
	var out []*caffepb.LayerParameter
	for i, in := range layers {
		l := proto.Clone(in).(*caffepb.LayerParameter)
		out = append(out, l)
		for j := range l.Bottom {
			src := source[topRef{i, j}]
			if readers[src] > 1 {
				l.Bottom[j] = SplitBlobName(layers[src.layer].GetName(), l.Bottom[j], src.top, next[src])
				next[src]++
			}
		}
		for j, name := range l.Top {
			ref := topRef{i, j}
			if readers[ref] <= 1 {
				continue
			}
			split := &caffepb.LayerParameter{
				Name:   proto.String(SplitLayerName(l.GetName(), name, j)),
				Type:   proto.String("Split"),
				Bottom: []string{name},
			}
			w := lossWeight[ref]
			for k := range readers[ref] {
				split.Top = append(split.Top, SplitBlobName(l.GetName(), name, j, k))
				if w != 0 {
					if k == 0 {
						split.LossWeight = append(split.LossWeight, w)
					} else {
						split.LossWeight = append(split.LossWeight, 0)
					}
				}
			}
			if w != 0 {
				// The loss moves to the split's first output.
				l.LossWeight = nil
				next[ref]++
			}
			out = append(out, split)
		}
	}
	return out, nil
}
