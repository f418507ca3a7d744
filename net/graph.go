package net

import (
	"iter"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// Graph is a read-only view of a net's structure: its layers (Nodes), the
// named blobs that connect them (Edges), and the layers' learnable
// parameters (Params) with their multipliers and owners. It is for code
// that reads a whole net: an exporter to another format, a gradient
// bucketer, a drawing.
//
//	g := n.Graph()
//	for node := range g.Nodes() {
//		for b := range node.Bottoms() {
//			fmt.Println(b.Name(), "->", node.Name())
//		}
//		for p := range node.Params() {
//			fmt.Println(p.Name(), p.Blob().ShapeString(), p.LRMult())
//		}
//	}
//
// It hands out none of the net's own slices: sequences are iterators and
// their elements small values that read the net, so nothing a caller does
// with them can change the net's structure (the blobs and layers they
// return are the net's own, to read and, as a solver does, to write).
// A Graph and its elements allocate nothing and stay valid as long as the
// net.
type Graph[T Float] struct{ n *Net[T] }

// Graph returns the read-only view of the net's structure.
func (n *Net[T]) Graph() Graph[T] { return Graph[T]{n} }

// NumNodes returns the number of layers, Split layers included.
func (g Graph[T]) NumNodes() int { return len(g.n.layers) }

// Node returns layer i (0 <= i < NumNodes).
func (g Graph[T]) Node(i int) Node[T] {
	_ = g.n.layers[i] // bounds check
	return Node[T]{g.n, i}
}

// Nodes returns the layers in order: the order of the forward pass.
func (g Graph[T]) Nodes() iter.Seq[Node[T]] { return indexSeq(g.n, len(g.n.layers), newNode[T]) }

// NumEdges returns the number of named blobs.
func (g Graph[T]) NumEdges() int { return len(g.n.blobs) }

// Edge returns blob i (0 <= i < NumEdges).
func (g Graph[T]) Edge(i int) Edge[T] {
	_ = g.n.blobs[i]
	return Edge[T]{g.n, i}
}

// Edges returns the named blobs in the order the layers first produce them.
func (g Graph[T]) Edges() iter.Seq[Edge[T]] { return indexSeq(g.n, len(g.n.blobs), newEdge[T]) }

// Outputs returns the blobs no layer consumes: the net's outputs.
func (g Graph[T]) Outputs() iter.Seq[Edge[T]] { return idSeq(g.n, g.n.outputIDs, newEdge[T]) }

// NumParams returns the number of learnable blobs of all layers, a shared
// parameter counted once per layer using it.
func (g Graph[T]) NumParams() int { return len(g.n.params) }

// Param returns learnable blob i of all layers' (0 <= i < NumParams).
func (g Graph[T]) Param(i int) Param[T] {
	_ = g.n.params[i]
	return Param[T]{g.n, i}
}

// Params returns every layer's learnable blobs, in layer order: Caffe's
// params, Net.Params' order.
func (g Graph[T]) Params() iter.Seq[Param[T]] { return indexSeq(g.n, len(g.n.params), newParam[T]) }

// NumLearnableParams returns the number of parameters a solver updates:
// each shared parameter once.
func (g Graph[T]) NumLearnableParams() int { return len(g.n.learnable) }

// LearnableParam returns learnable parameter k (0 <= k <
// NumLearnableParams): the owner, whose Learnable() is k.
func (g Graph[T]) LearnableParam(k int) Param[T] { return Param[T]{g.n, g.n.learnable[k].param} }

// LearnableParams returns the parameters a solver updates, in
// Net.LearnableParams' order: the owners.
func (g Graph[T]) LearnableParams() iter.Seq[Param[T]] {
	return func(yield func(Param[T]) bool) {
		for _, l := range g.n.learnable {
			if !yield(Param[T]{g.n, l.param}) {
				return
			}
		}
	}
}

// Node is one layer of a net, as a Graph shows it.
type Node[T Float] struct {
	n *Net[T]
	i int
}

func newNode[T Float](n *Net[T], i int) Node[T] { return Node[T]{n, i} }

func (v Node[T]) rec() *layerRecord[T] { return &v.n.layers[v.i] }

// Index returns the layer's position in the net.
func (v Node[T]) Index() int { return v.i }

// Name returns the layer's name.
func (v Node[T]) Name() string { return v.rec().name }

// Type returns the layer's type, e.g. "Convolution".
func (v Node[T]) Type() string { return v.rec().layer.Type() }

// Layer returns the layer, whose LayerBase().Param() is its parameter.
func (v Node[T]) Layer() layer.Layer[T] { return v.rec().layer }

// NeedBackward reports whether the layer runs a backward pass.
func (v Node[T]) NeedBackward() bool { return v.rec().needBackward }

// NumBottoms returns the number of the layer's bottoms.
func (v Node[T]) NumBottoms() int { return len(v.rec().bottomIDs) }

// Bottom returns bottom j of the layer.
func (v Node[T]) Bottom(j int) Edge[T] { return Edge[T]{v.n, v.rec().bottomIDs[j]} }

// Bottoms returns the layer's bottoms, in order.
func (v Node[T]) Bottoms() iter.Seq[Edge[T]] { return idSeq(v.n, v.rec().bottomIDs, newEdge[T]) }

// BottomNeedBackward reports whether the layer computes a gradient for
// bottom j.
func (v Node[T]) BottomNeedBackward(j int) bool { return v.rec().bottomNeedBackward[j] }

// NumTops returns the number of the layer's tops.
func (v Node[T]) NumTops() int { return len(v.rec().topIDs) }

// Top returns top j of the layer. A top computed in place is the same
// Edge as the bottom it overwrites.
func (v Node[T]) Top(j int) Edge[T] { return Edge[T]{v.n, v.rec().topIDs[j]} }

// Tops returns the layer's tops, in order.
func (v Node[T]) Tops() iter.Seq[Edge[T]] { return idSeq(v.n, v.rec().topIDs, newEdge[T]) }

// Params returns the layer's learnable blobs, in order (blob j of the
// layer is the j-th).
func (v Node[T]) Params() iter.Seq[Param[T]] { return idSeq(v.n, v.rec().params, newParam[T]) }

// Edge is one named blob of a net, as a Graph shows it: the connection
// from the layers that write it to the layers that read it.
type Edge[T Float] struct {
	n *Net[T]
	i int
}

func newEdge[T Float](n *Net[T], i int) Edge[T] { return Edge[T]{n, i} }

// Index returns the blob's position in the net (Net.Blobs' order).
func (e Edge[T]) Index() int { return e.i }

// Name returns the blob's name.
func (e Edge[T]) Name() string { return e.n.blobs[e.i].name }

// Blob returns the blob.
func (e Edge[T]) Blob() *blob.Blob[T] { return e.n.blobs[e.i].blob }

// LossWeight returns the weight of the blob in the net's loss, 0 for a
// blob that is not a loss.
func (e Edge[T]) LossWeight() T { return e.n.blobs[e.i].lossWeight }

// NeedBackward reports whether the blob gets a gradient.
func (e Edge[T]) NeedBackward() bool { return e.n.blobs[e.i].needBackward }

// Param is one learnable blob of one layer, as a Graph shows it. Layers
// that share a parameter (ParamSpec.name) each have a Param; all but the
// first, its owner, use the owner's memory.
type Param[T Float] struct {
	n *Net[T]
	i int
}

func newParam[T Float](n *Net[T], i int) Param[T] { return Param[T]{n, i} }

func (p Param[T]) rec() *paramRecord[T] { return &p.n.params[p.i] }

// Index returns the parameter's position among all layers' learnable blobs
// (Net.Params' order).
func (p Param[T]) Index() int { return p.i }

// Node returns the layer the parameter belongs to.
func (p Param[T]) Node() Node[T] { return Node[T]{p.n, p.rec().layer} }

// IndexInLayer returns the parameter's index among its layer's learnable
// blobs (0 for a convolution's weights, 1 for its bias).
func (p Param[T]) IndexInLayer() int { return p.rec().index }

// Name returns the parameter's ParamSpec name, or its index in its layer
// when unnamed (Net.ParamDisplayNames).
func (p Param[T]) Name() string { return p.rec().displayName }

// Blob returns the parameter's blob: its data the weights, its diff the
// gradient.
func (p Param[T]) Blob() *blob.Blob[T] { return p.rec().blob }

// Owner returns the parameter whose memory this one shares, and true; a
// parameter that owns its memory returns itself and false.
func (p Param[T]) Owner() (Param[T], bool) {
	if o := p.rec().owner; o >= 0 {
		return Param[T]{p.n, o}, true
	}
	return p, false
}

// Learnable returns the index of the parameter among those a solver
// updates (Graph.LearnableParam): its own, or its owner's when shared.
func (p Param[T]) Learnable() int { return p.rec().learnable }

// LRMult returns the parameter's lr_mult: the owner's ParamSpec's,
// completed by its sharers' (they must agree where both are set).
func (p Param[T]) LRMult() float32 { return p.n.learnable[p.rec().learnable].lr }

// DecayMult returns the parameter's decay_mult, merged as LRMult.
func (p Param[T]) DecayMult() float32 { return p.n.learnable[p.rec().learnable].decay }

// indexSeq yields at(n, 0), ..., at(n, count-1).
func indexSeq[T Float, V any](n *Net[T], count int, at func(*Net[T], int) V) iter.Seq[V] {
	return func(yield func(V) bool) {
		for i := range count {
			if !yield(at(n, i)) {
				return
			}
		}
	}
}

// idSeq yields at(n, id) for each id of ids.
func idSeq[T Float, V any](n *Net[T], ids []int, at func(*Net[T], int) V) iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, id := range ids {
			if !yield(at(n, id)) {
				return
			}
		}
	}
}
