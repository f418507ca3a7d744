package net

import "github.com/gocaffe/gocaffe/layer"

// The fold pass's siblings: producers of folded chains that read the same
// single bottom (or a removed Split's tops of it) and that one of them can compute in its own pass
// (layer.SiblingFolder: SSD's box and class heads on one feature map) are
// handed to the first, which computes them all at once. The bottom must
// not be written between the lead and a sibling (no layer between has it
// as a top); the sibling checks again at its turn that it was not, and
// otherwise computes its own pass.

// planSiblings groups the chains' producers of fs and reports how many
// producers a lead computes.
func (n *Net[T]) planSiblings(fs *foldState[T]) int {
	grouped := make([]bool, len(n.layers))
	count := 0
	for a, c := range fs.chains {
		lead, ok := n.layers[c.producer].layer.(layer.SiblingFolder[T])
		if !ok || grouped[c.producer] || len(n.layers[c.producer].bottoms) != 1 {
			continue
		}
		var others []layer.Layer[T]
		var at []int
		for _, d := range fs.chains[a+1:] {
			if !grouped[d.producer] && n.siblingOf(fs, c.producer, d.producer, lead) {
				others, at = append(others, n.layers[d.producer].layer), append(at, d.producer)
			}
		}
		if len(others) == 0 || lead.SetSiblings(others) != nil {
			continue
		}
		grouped[c.producer] = true
		for _, j := range at {
			grouped[j] = true
			n.plan.Layers[j].Folded = "computed with " + n.layers[c.producer].name
		}
		count += len(at)
	}
	return count
}

// siblingOf says whether layer j reads layer i's single bottom, unwritten
// between them, and lead (layer i) can compute it. The same bottom is the
// same data memory: a Split's tops, one to each reader, share their
// bottom's.
func (n *Net[T]) siblingOf(fs *foldState[T], i, j int, lead layer.SiblingFolder[T]) bool {
	data := n.layers[i].bottoms[0].Data()
	if data == nil || len(n.layers[j].bottoms) != 1 || n.layers[j].bottoms[0].Data() != data || !lead.Sibling(n.layers[j].layer) {
		return false
	}
	for k := i; k < j; k++ {
		if fs.removed[k] {
			continue // a Split: its tops share the data it reads
		}
		for _, t := range n.layers[k].tops {
			if t.Data() == data {
				return false
			}
		}
	}
	return true
}
