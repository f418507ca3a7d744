package net_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// graphNet has a split (data feeds two layers), an in-place layer, a
// parameter shared between two layers with its lr_mult given by the
// sharer, and a layer with a bias whose decay_mult is 0.
const graphNet = `name: "Graph"
layer { name: "data" type: "DummyData" top: "data" top: "target"
  dummy_data_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 4 } } }
layer { name: "a" type: "InnerProduct" bottom: "data" top: "a"
  param { name: "w" } param { decay_mult: 0 } inner_product_param { num_output: 4 } }
layer { name: "relu" type: "ReLU" bottom: "a" top: "a" }
layer { name: "b" type: "InnerProduct" bottom: "data" top: "b"
  param { name: "w" lr_mult: 2 } inner_product_param { num_output: 4 bias_term: false } }
layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" top: "sum" }
layer { name: "loss" type: "EuclideanLoss" bottom: "sum" bottom: "target" top: "loss" loss_weight: 0.5 }`

// describe writes a node as "name(type) bottoms -> tops [params]".
func describe(node net.Node[float32]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s)", node.Name(), node.Type())
	for e := range node.Bottoms() {
		b.WriteString(" " + e.Name())
	}
	b.WriteString(" ->")
	for e := range node.Tops() {
		b.WriteString(" " + e.Name())
	}
	for p := range node.Params() {
		fmt.Fprintf(&b, " [%s lr %v decay %v]", p.Name(), p.LRMult(), p.DecayMult())
	}
	return b.String()
}

// The graph shows the net as built: splits inserted, the in-place top the
// same blob as its bottom, the shared parameter's owner and merged
// multipliers, the output and its loss weight.
func TestGraph(t *testing.T) {
	n, err := net.New[float32](parseNet(t, graphNet), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
	if err != nil {
		t.Fatal(err)
	}
	g := n.Graph()
	var got []string
	for node := range g.Nodes() {
		got = append(got, describe(node))
	}
	want := []string{
		"data(DummyData) -> data target",
		"data_data_0_split(Split) data -> data_data_0_split_0 data_data_0_split_1",
		"a(InnerProduct) data_data_0_split_0 -> a [w lr 2 decay 1] [1 lr 1 decay 0]",
		"relu(ReLU) a -> a",
		"b(InnerProduct) data_data_0_split_1 -> b [w lr 2 decay 1]",
		"sum(Eltwise) a b -> sum",
		"loss(EuclideanLoss) sum target -> loss",
	}
	if !slices.Equal(got, want) {
		t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g.NumNodes() != len(want) || g.Node(3).Top(0) != g.Node(3).Bottom(0) || g.Node(3).Index() != 3 {
		t.Errorf("relu's top %v, bottom %v: want the same blob", g.Node(3).Top(0), g.Node(3).Bottom(0))
	}

	// Params: three, two learnable; b's weights share a's.
	if g.NumParams() != 3 || g.NumLearnableParams() != 2 {
		t.Fatalf("%d params, %d learnable; want 3 and 2", g.NumParams(), g.NumLearnableParams())
	}
	shared := g.Param(2)
	owner, isShared := shared.Owner()
	if !isShared || owner.Index() != 0 || shared.Node().Name() != "b" || shared.IndexInLayer() != 0 || shared.Learnable() != 0 {
		t.Errorf("b's weights: owner %d (shared %v), layer %s, index %d, learnable %d; want owner 0, layer b, index 0, learnable 0",
			owner.Index(), isShared, shared.Node().Name(), shared.IndexInLayer(), shared.Learnable())
	}
	if _, isShared := g.Param(0).Owner(); isShared || shared.Blob().Data() != g.Param(0).Blob().Data() {
		t.Error("a's weights: want an owner whose memory b's weights share")
	}
	var learnable []int
	for p := range g.LearnableParams() {
		learnable = append(learnable, p.Index())
	}
	if !slices.Equal(learnable, []int{0, 1}) || g.LearnableParam(1).Name() != "1" || g.LearnableParam(1).Node().Name() != "a" {
		t.Errorf("learnable params %v, want [0 1]: a's weights and bias", learnable)
	}

	// Edges: every named blob; the output with its loss weight.
	var outputs []string
	for e := range g.Outputs() {
		outputs = append(outputs, fmt.Sprintf("%s %v", e.Name(), e.LossWeight()))
	}
	if !slices.Equal(outputs, []string{"loss 0.5"}) {
		t.Errorf("outputs %v, want [loss 0.5]", outputs)
	}
	var names []string
	for e := range g.Edges() {
		if e.Blob() != n.BlobByName(e.Name()) || g.Edge(e.Index()) != e {
			t.Errorf("edge %d (%s) is not the net's blob of that name", e.Index(), e.Name())
		}
		names = append(names, e.Name())
	}
	if !slices.Equal(names, n.BlobNames()) || g.NumEdges() != len(names) {
		t.Errorf("edges %v, want the net's blobs %v", names, n.BlobNames())
	}
	data := g.Node(0).Top(0)
	if data.NeedBackward() || !g.Node(5).Top(0).NeedBackward() || !g.Node(6).BottomNeedBackward(0) || g.Node(6).BottomNeedBackward(1) {
		t.Error("need-backward flags: want none for the data, some for sum and loss's first bottom, none for its target")
	}

	// An iteration stops where the loop does.
	count := 0
	for range g.Nodes() {
		count++
		if count == 2 {
			break
		}
	}
	if count != 2 {
		t.Errorf("broke out of Nodes after %d, want 2", count)
	}
}

// The slices a net hands out are copies: changing them changes nothing.
func TestAccessorsCopy(t *testing.T) {
	n, err := net.New[float32](parseNet(t, graphNet), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
	if err != nil {
		t.Fatal(err)
	}
	lr := n.ParamsLR()
	lr[0] = 100
	_ = append(lr[:1], 7)
	n.LearnableParams()[0] = nil
	n.Layers()[0] = nil
	n.Bottoms(2)[0] = nil
	n.BottomNeedBackward(6)[0] = false
	n.ParamOwners()[2] = -1
	g := n.Graph()
	if g.LearnableParam(0).LRMult() != 2 || g.LearnableParam(1).LRMult() != 1 || n.ParamsLR()[1] != 1 {
		t.Errorf("lr_mults %v after changing a copy, want [2 1]", n.ParamsLR())
	}
	if n.LearnableParams()[0] == nil || n.Layers()[0] == nil || n.Bottoms(2)[0] == nil || !n.BottomNeedBackward(6)[0] || n.ParamOwners()[2] != 0 {
		t.Error("changing a returned slice changed the net")
	}
}
