package net_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// dupNet has two layers named "ip" (different shapes) and two named "loss",
// as BVLC's mnist_autoencoder has two named "loss".
const dupNet = `
name: "Duplicates"
layer { name: "data" type: "DummyData" top: "data" top: "target"
  dummy_data_param { shape { dim: 4 dim: 3 } data_filler { type: "gaussian" } shape { dim: 4 dim: 2 } data_filler { type: "gaussian" } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "a"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "b"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "a" bottom: "target" top: "la" }
layer { name: "loss" type: "EuclideanLoss" bottom: "b" bottom: "target" top: "lb" loss_weight: 0 }`

// Caffe accepts two layers of one name: layer_by_name finds the later one,
// CopyTrainedLayersFrom and ShareTrainedLayersWith the earlier one.
func TestDuplicateLayerNames(t *testing.T) {
	n := build(t, dupNet, caffepb.Phase_TRAIN)
	names := n.LayerNames()
	if got := strings.Join(names, ","); !strings.Contains(got, "ip,ip") || strings.Count(got, "loss") != 2 {
		t.Fatalf("layers %v", names)
	}
	first, second := n.Layers()[slices.Index(names, "ip")], n.Layers()[slices.Index(names, "ip")+1]
	if n.LayerByName("ip") != second {
		t.Error("LayerByName(ip) is not the later layer")
	}
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	if first.LayerBase().Blobs()[0].AsumDiff() == 0 || second.LayerBase().Blobs()[0].AsumDiff() != 0 {
		t.Error("the loss-weighted branch got no gradient, or the weight-0 one got one")
	}

	// A model of this net: both "ip" entries go to the first "ip" layer,
	// the later entry last, so it ends up with the second layer's weights.
	model := n.ToProto(false)
	other, err := net.New[float64](parseNet(t, dupNet), net.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	otherSecond := slices.Clone(other.LayerByName("ip").LayerBase().Blobs()[0].CPUData())
	if err := other.CopyTrainedLayersFrom(model); err != nil {
		t.Fatal(err)
	}
	oFirst := other.Layers()[slices.Index(other.LayerNames(), "ip")]
	if !slices.Equal(oFirst.LayerBase().Blobs()[0].CPUData(), second.LayerBase().Blobs()[0].CPUData()) {
		t.Error("the first ip layer does not hold the model's later ip weights")
	}
	if !slices.Equal(other.LayerByName("ip").LayerBase().Blobs()[0].CPUData(), otherSecond) {
		t.Error("the second ip layer was written to")
	}

	// Sharing: the test net's first "ip" ends up on the train net's later
	// "ip" blobs, its second keeps its own.
	test := build(t, dupNet, caffepb.Phase_TEST)
	if err := test.ShareTrainedLayersWith(n); err != nil {
		t.Fatal(err)
	}
	tFirst := test.Layers()[slices.Index(test.LayerNames(), "ip")]
	if tFirst.LayerBase().Blobs()[0].Data() != second.LayerBase().Blobs()[0].Data() {
		t.Error("test net's first ip does not share the train net's later ip")
	}
	if test.LayerByName("ip").LayerBase().Blobs()[0].Data() == second.LayerBase().Blobs()[0].Data() {
		t.Error("test net's second ip shares weights")
	}
}

// A loss layer without a top gets an anonymous one (Caffe's AutoTopBlobs):
// its loss counts, it is not an output, and no layer can name it.
func TestLossAutoTop(t *testing.T) {
	text := strings.Replace(euclideanNet("", false), `bottom: "target" top: "loss"`, `bottom: "target"`, 1)
	n := build(t, text, caffepb.Phase_TRAIN)
	loss, err := n.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	named := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	want, err := named.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	if loss != want || loss <= 0 {
		t.Errorf("loss %v, want %v", loss, want)
	}
	if len(n.OutputBlobs()) != 0 {
		t.Errorf("outputs %v, want none", n.OutputBlobNames())
	}
	if n.BlobByName("(automatic)") != nil {
		t.Error("the anonymous top can be looked up")
	}
	if !slices.Equal(paramDiffs(n)[0], paramDiffs(named)[0]) {
		t.Error("gradients differ from the net with a named loss top")
	}
	// SoftmaxWithLoss too; Accuracy is no loss layer and still needs a top.
	sm := strings.Replace(tinyNet("", "", ""), `bottom: "label" top: "top_loss"`, `bottom: "label"`, 1)
	if _, err := build(t, sm, caffepb.Phase_TRAIN).ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	acc := tinyNet("", "", "") + `
layer { name: "acc" type: "Accuracy" bottom: "innerproduct" bottom: "label" }`
	if _, err := net.New[float32](parseNet(t, acc), net.Options{}); err == nil || !strings.Contains(err.Error(), "takes at least 1 top") {
		t.Errorf("Accuracy without top: err = %v", err)
	}
}

// An explicit propagate_down: true asks for a gradient the blob would not
// otherwise get, as Caffe's AppendBottom.
func TestPropagateDownForcesGradient(t *testing.T) {
	text := strings.Replace(euclideanNet("", false), `layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"`,
		`layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" propagate_down: true`, 1)
	n := build(t, text, caffepb.Phase_TRAIN)
	if got := n.BottomNeedBackward(1); !slices.Equal(got, []bool{true}) {
		t.Fatalf("ip bottom_need_backward %v, want [true]", got)
	}
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	if n.BlobByName("data").AsumDiff() == 0 {
		t.Error("data got no gradient")
	}
}

// Caffe's engine fields (CUDNN included) and fields of LayerParameter that
// a layer does not read are accepted and ignored.
func TestUnusedFieldsAccepted(t *testing.T) {
	text := `
name: "Engines"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 2 dim: 3 dim: 6 dim: 6 } data_filler { type: "gaussian" } shape { dim: 2 } data_filler { type: "constant" value: 1 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 4 kernel_size: 3 engine: CUDNN weight_filler { type: "xavier" } }
  transform_param { scale: 3 } python_param { module: "unused" } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" relu_param { engine: CUDNN } }
layer { name: "lrn" type: "LRN" bottom: "conv" top: "lrn" lrn_param { engine: CAFFE } }
layer { name: "pool" type: "Pooling" bottom: "lrn" top: "pool" pooling_param { pool: MAX kernel_size: 2 stride: 2 engine: CUDNN } }
layer { name: "sig" type: "Sigmoid" bottom: "pool" top: "sig" sigmoid_param { engine: CUDNN } }
layer { name: "tanh" type: "TanH" bottom: "sig" top: "tanh" tanh_param { engine: CUDNN } }
layer { name: "ip" type: "InnerProduct" bottom: "tanh" top: "ip" inner_product_param { num_output: 3 } }
layer { name: "sm" type: "Softmax" bottom: "ip" top: "sm" softmax_param { engine: CUDNN } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" softmax_param { engine: CUDNN } }`
	n := build(t, text, caffepb.Phase_TRAIN)
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
}
