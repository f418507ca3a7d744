package net_test

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the nets' and solvers' logs
	os.Exit(m.Run())
}

func parseNet(t *testing.T, text string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatalf("net text: %v", err)
	}
	return p
}

func build(t *testing.T, text string, phase caffepb.Phase) *net.Net[float64] {
	t.Helper()
	n, err := net.New[float64](parseNet(t, text), net.Options{State: &caffepb.NetState{Phase: phase.Enum()}, Seed: 1701})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tinyNet is Caffe's test_net TinyNet: gaussian data, an inner product and
// a softmax loss (force_backward and loss weights configurable).
// ipParams replaces the inner product's param specs when not empty.
func tinyNet(extra, ipParams, lossExtra string) string {
	if ipParams == "" {
		ipParams = "param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }"
	}
	return extra + `
name: "TinyTestNetwork"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param {
    shape { dim: 5 dim: 2 dim: 3 dim: 4 } data_filler { type: "gaussian" std: 0.01 }
    shape { dim: 5 } data_filler { type: "constant" value: 0 } } }
layer { name: "innerproduct" type: "InnerProduct" bottom: "data" top: "innerproduct"
  inner_product_param { num_output: 1 weight_filler { type: "gaussian" std: 10 } bias_filler { type: "constant" value: 0 } }
  ` + ipParams + ` }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "innerproduct" bottom: "label" top: "top_loss" ` + lossExtra + ` }`
}

// euclideanNet regresses an inner product of gaussian data on gaussian
// targets; lossWeight scales the loss.
func euclideanNet(lossWeight string, force bool) string {
	fb := ""
	if force {
		fb = "force_backward: true"
	}
	return fb + `
name: "EuclideanNet"
layer { name: "data" type: "DummyData" top: "data" top: "target"
  dummy_data_param { shape { dim: 4 dim: 3 } data_filler { type: "gaussian" } shape { dim: 4 dim: 2 } data_filler { type: "gaussian" } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" ` + lossWeight + ` }`
}

func TestLookups(t *testing.T) {
	n := build(t, tinyNet("", "", ""), caffepb.Phase_TRAIN)
	for _, b := range []string{"data", "label", "innerproduct", "top_loss"} {
		if n.BlobByName(b) == nil {
			t.Errorf("no blob %q", b)
		}
	}
	if n.BlobByName("nope") != nil || n.LayerByName("nope") != nil {
		t.Error("lookup of a missing name found something")
	}
	if l := n.LayerByName("innerproduct"); l == nil || l.Type() != "InnerProduct" {
		t.Errorf("LayerByName(innerproduct) = %v", l)
	}
	if !slices.Equal(n.OutputBlobNames(), []string{"top_loss"}) {
		t.Errorf("outputs %v, want [top_loss]", n.OutputBlobNames())
	}
	if n.OutputLossWeight(0) != 1 {
		t.Errorf("loss output weight %v, want the default 1", n.OutputLossWeight(0))
	}
}

// Caffe's TestBottomNeedBackward and its force_backward variant: data from
// a data layer never needs a gradient, unless backward is forced; labels
// never do.
func TestBottomNeedBackward(t *testing.T) {
	n := build(t, tinyNet("", "", ""), caffepb.Phase_TRAIN)
	want := [][]bool{nil, {false}, {true, false}}
	for i := range n.Layers() {
		if got := n.BottomNeedBackward(i); !slices.Equal(got, want[i]) {
			t.Errorf("layer %d bottom_need_backward %v, want %v", i, got, want[i])
		}
	}
	forced := build(t, tinyNet("force_backward: true", "", ""), caffepb.Phase_TRAIN)
	want = [][]bool{nil, {true}, {true, false}}
	for i := range forced.Layers() {
		if got := forced.BottomNeedBackward(i); !slices.Equal(got, want[i]) {
			t.Errorf("forced: layer %d bottom_need_backward %v, want %v", i, got, want[i])
		}
	}
	// Euclidean loss propagates to both bottoms when forced.
	e := build(t, euclideanNet("", true), caffepb.Phase_TRAIN)
	if got := e.BottomNeedBackward(2); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("forced euclidean loss bottoms %v, want [true true]", got)
	}
}

// With lr_mult 0 a layer's parameters get no gradient, and the layer itself
// needs no backward when nothing below it does.
func TestParamPropagateDown(t *testing.T) {
	n := build(t, tinyNet("", "param { lr_mult: 0 } param { lr_mult: 0 }", ""), caffepb.Phase_TRAIN)
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	ip := n.LayerByName("innerproduct").LayerBase()
	if ip.ParamPropagateDown(0) || ip.ParamPropagateDown(1) {
		t.Error("lr_mult 0 parameters propagate down")
	}
	if n.LayerNeedBackward(1) {
		t.Error("inner product with frozen parameters and data input needs backward")
	}
	for _, p := range ip.Blobs() {
		if p.AsumDiff() != 0 {
			t.Error("a frozen parameter got a gradient")
		}
	}
}

// Caffe's TestLossWeight: scaling a loss by k scales the loss and every
// gradient by k.
func TestLossWeight(t *testing.T) {
	base := build(t, euclideanNet("", true), caffepb.Phase_TRAIN)
	baseLoss, err := base.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	baseDiffs := paramDiffs(base)
	for _, k := range []float64{0.5, 2, -1.5} {
		n := build(t, euclideanNet("loss_weight: "+ftoa(k), true), caffepb.Phase_TRAIN)
		loss, err := n.ForwardBackward()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(loss-k*baseLoss) > 1e-9*math.Abs(baseLoss) {
			t.Errorf("loss_weight %v: loss %v, want %v", k, loss, k*baseLoss)
		}
		for i, d := range paramDiffs(n) {
			for j := range d {
				if math.Abs(d[j]-k*baseDiffs[i][j]) > 1e-9*math.Max(1, math.Abs(baseDiffs[i][j])) {
					t.Fatalf("loss_weight %v: param %d diff[%d] = %v, want %v", k, i, j, d[j], k*baseDiffs[i][j])
				}
			}
		}
	}
}

func paramDiffs(n *net.Net[float64]) [][]float64 {
	var out [][]float64
	for _, p := range n.LearnableParams() {
		out = append(out, slices.Clone(p.CPUDiff()))
	}
	return out
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// sharedNet is Caffe's SharedWeightsNetwork: two inner products of the same
// data share their weights by name, and a euclidean loss compares them.
const sharedNet = `
name: "SharedWeightsNetwork"
layer { name: "data" type: "DummyData" top: "data" dummy_data_param { shape { dim: 10 dim: 2 dim: 3 dim: 5 } data_filler { type: "gaussian" std: 10 } } }
layer { name: "innerproduct1" type: "InnerProduct" bottom: "data" top: "innerproduct1"
  inner_product_param { num_output: 10 bias_term: false weight_filler { type: "gaussian" std: 10 } } param { name: "sharedweights" } }
layer { name: "innerproduct2" type: "InnerProduct" bottom: "data" top: "innerproduct2"
  inner_product_param { num_output: 10 bias_term: false weight_filler { type: "gaussian" std: 10 } } param { name: "sharedweights" } }
layer { name: "loss" type: "EuclideanLoss" bottom: "innerproduct1" bottom: "innerproduct2" top: "loss" }`

// Caffe's TestSharedWeightsDataNet/DiffNet: shared parameters are one
// memory, the outputs equal, the loss 0; their diff is the sum of both
// layers' gradients, here opposite and so zero.
func TestSharedWeights(t *testing.T) {
	n := build(t, sharedNet, caffepb.Phase_TRAIN)
	w1 := n.LayerByName("innerproduct1").LayerBase().Blobs()[0]
	w2 := n.LayerByName("innerproduct2").LayerBase().Blobs()[0]
	if w1.Data() != w2.Data() || w1.Diff() != w2.Diff() {
		t.Fatal("shared weights do not share memory")
	}
	if len(n.LearnableParams()) != 1 || len(n.Params()) != 2 || n.ParamOwners()[1] != 0 {
		t.Errorf("learnable %d, params %d, owners %v; want 1, 2, [-1 0]", len(n.LearnableParams()), len(n.Params()), n.ParamOwners())
	}
	loss, err := n.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	if loss != 0 {
		t.Errorf("loss of identical branches %v, want 0", loss)
	}
	if w1.AsumDiff() != 0 {
		t.Errorf("shared diff %v, want 0 (the two gradients cancel)", w1.AsumDiff())
	}
	// Unshared, the weights differ and the loss is positive.
	unshared := build(t, strings.ReplaceAll(sharedNet, `param { name: "sharedweights" }`, ""), caffepb.Phase_TRAIN)
	if l, _ := unshared.Forward(); !(l > 0) {
		t.Errorf("loss of independent branches %v, want > 0", l)
	}
}

func TestSharedWeightsErrors(t *testing.T) {
	bad := strings.Replace(sharedNet, "num_output: 10 bias_term: false weight_filler { type: \"gaussian\" std: 10 } } param { name: \"sharedweights\" } }\nlayer { name: \"loss\"",
		"num_output: 5 bias_term: false } param { name: \"sharedweights\" } }\nlayer { name: \"loss\"", 1)
	_, err := net.New[float32](parseNet(t, bad), net.Options{})
	if err == nil || !strings.Contains(err.Error(), "shared parameter \"sharedweights\" has shape 5 30") {
		t.Errorf("shape mismatch: err = %v", err)
	}
	lr := strings.Replace(sharedNet, `param { name: "sharedweights" } }
layer { name: "loss"`, `param { name: "sharedweights" lr_mult: 3 } }
layer { name: "loss"`, 1)
	lr = strings.Replace(lr, `param { name: "sharedweights" } }`, `param { name: "sharedweights" lr_mult: 2 } }`, 1)
	_, err = net.New[float32](parseNet(t, lr), net.Options{})
	if err == nil || !strings.Contains(err.Error(), "mismatched lr_mult") {
		t.Errorf("lr_mult mismatch: err = %v", err)
	}
}

func TestForwardFromToAndReshape(t *testing.T) {
	n := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	full, err := n.Forward()
	if err != nil {
		t.Fatal(err)
	}
	// DummyData refills each forward; run the data layer once, then the rest
	// in two parts, reseeding so the data are the same as in the full pass.
	n.Reseed(0)
	full, _ = n.Forward()
	n.Reseed(0)
	if _, err := n.ForwardFromTo(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := n.ForwardFromTo(1, 1); err != nil {
		t.Fatal(err)
	}
	part, err := n.ForwardFromTo(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if part != full {
		t.Errorf("ForwardFromTo pieces give loss %v, the whole pass %v", part, full)
	}
	if _, err := n.ForwardFromTo(0, 5); err == nil {
		t.Error("ForwardFromTo past the last layer succeeded")
	}
	// Changing an input's shape and reshaping flows through the net.
	if err := n.BlobByName("data").Reshape([]int{7, 3}); err != nil {
		t.Fatal(err)
	}
	if err := n.BlobByName("target").Reshape([]int{7, 2}); err != nil {
		t.Fatal(err)
	}
	if err := n.Reshape(); err != nil {
		t.Fatal(err)
	}
	if got := n.BlobByName("ip").ShapeString(); got != "7 2 (14)" {
		t.Errorf("after Reshape ip is %s, want 7 2", got)
	}
}

func TestStateFiltering(t *testing.T) {
	text := `
layer { name: "data" type: "DummyData" top: "data" dummy_data_param { shape { dim: 1 dim: 2 } } }
layer { name: "train_only" type: "ReLU" bottom: "data" top: "a" include { phase: TRAIN } }
layer { name: "test_only" type: "ReLU" bottom: "data" top: "b" include { phase: TEST } }
layer { name: "level1" type: "ReLU" bottom: "data" top: "c" include { min_level: 1 } }
layer { name: "level_le2" type: "ReLU" bottom: "data" top: "d" include { max_level: 2 } }
layer { name: "stage_ab" type: "ReLU" bottom: "data" top: "e" include { stage: "a" stage: "b" } }
layer { name: "not_stage_a" type: "ReLU" bottom: "data" top: "f" exclude { stage: "a" } }
layer { name: "either" type: "ReLU" bottom: "data" top: "g" include { stage: "x" } include { phase: TEST } }
layer { name: "notstage" type: "ReLU" bottom: "data" top: "h" include { not_stage: "b" } }`
	cases := []struct {
		state *caffepb.NetState
		want  []string
	}{
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, []string{"data", "train_only", "level_le2", "not_stage_a", "notstage"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TEST.Enum(), Level: proto.Int32(3)}, []string{"data", "test_only", "level1", "not_stage_a", "either", "notstage"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum(), Stage: []string{"a", "b"}}, []string{"data", "train_only", "level_le2", "stage_ab"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum(), Stage: []string{"x"}, Level: proto.Int32(1)}, []string{"data", "train_only", "level1", "level_le2", "not_stage_a", "either", "notstage"}},
	}
	for _, c := range cases {
		p := parseNet(t, text)
		p.State = c.state
		kept, err := net.FilterNet(p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range kept {
			names = append(names, l.GetName())
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("state %v: kept %v, want %v", c.state, names, c.want)
		}
	}
	both := parseNet(t, `layer { name: "x" type: "ReLU" include { phase: TRAIN } exclude { phase: TEST } }`)
	if _, err := net.FilterNet(both); err == nil || !strings.Contains(err.Error(), "either include rules or exclude rules") {
		t.Errorf("include and exclude: err = %v", err)
	}
}

// Caffe's split insertion tests: names, order, in-place use and losses.
func TestInsertSplits(t *testing.T) {
	layers := parseNet(t, `
layer { name: "data" type: "Input" top: "data" top: "label" }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "data" top: "ip2" }
layer { name: "loss1" type: "EuclideanLoss" bottom: "ip1" bottom: "label" top: "loss1" }
layer { name: "loss2" type: "EuclideanLoss" bottom: "ip2" bottom: "label" top: "loss2" }`).Layer
	out, err := net.InsertSplits(layers)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range out {
		got = append(got, l.GetName()+"("+strings.Join(l.Bottom, ",")+"->"+strings.Join(l.Top, ",")+")")
	}
	want := []string{
		"data(->data,label)",
		"data_data_0_split(data->data_data_0_split_0,data_data_0_split_1)",
		"label_data_1_split(label->label_data_1_split_0,label_data_1_split_1)",
		"ip1(data_data_0_split_0->ip1)",
		"relu(ip1->ip1)",
		"ip2(data_data_0_split_1->ip2)",
		"loss1(ip1,label_data_1_split_0->loss1)",
		"loss2(ip2,label_data_1_split_1->loss2)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("split insertion:\n got %v\nwant %v", got, want)
	}
	// A top that is a loss (explicit weight) and also read counts twice:
	// the split's first output carries the loss.
	lossy, err := net.InsertSplits(parseNet(t, `
layer { name: "data" type: "Input" top: "data" }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" loss_weight: 0.5 }
layer { name: "relu" type: "ReLU" bottom: "ip" top: "r" }`).Layer)
	if err != nil {
		t.Fatal(err)
	}
	split := lossy[2]
	if split.GetType() != "Split" || !slices.Equal(split.Top, []string{"ip_ip_0_split_0", "ip_ip_0_split_1"}) ||
		!slices.Equal(split.LossWeight, []float32{0.5, 0}) || len(lossy[1].LossWeight) != 0 || lossy[3].Bottom[0] != "ip_ip_0_split_1" {
		t.Errorf("loss split: %v / %v / %v", lossy[1], split, lossy[3])
	}
	if _, err := net.InsertSplits(parseNet(t, `layer { name: "a" type: "ReLU" bottom: "ghost" top: "x" }`).Layer); err == nil ||
		!strings.Contains(err.Error(), `unknown bottom blob "ghost" (layer "a", bottom index 0)`) {
		t.Errorf("unknown bottom: err = %v", err)
	}
}

func TestBuildErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`layer { name: "a" type: "Input" top: "x" input_param { shape { dim: 1 } } }
		  layer { name: "b" type: "Input" top: "x" input_param { shape { dim: 1 } } }`, `top blob "x" produced by multiple sources`},
		{`layer { name: "a" type: "Convolushun" }`, `layer "a": unknown layer type "Convolushun" (known types:`},
		{`layer { name: "a" type: "Input" top: "x" input_param { shape { dim: 1 } } }
		  layer { name: "b" type: "ReLU" bottom: "x" top: "y" propagate_down: true propagate_down: false }`, "propagate_down must be given either 0 or bottom_size (1) times"},
		{`layer { name: "b" type: "ReLU" bottom: "nowhere" top: "y" }`, `unknown bottom blob "nowhere"`},
	}
	for _, c := range cases {
		_, err := net.New[float32](parseNet(t, c.text), net.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one containing %q", err, c.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.prototxt")
	os.WriteFile(path, []byte("name: \"x\"\nlayer {\n  name: \"a\"\n  type: \"ReLU\" }}\n"), 0o644)
	_, err := net.NewFromFile[float32](path, net.Options{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 4:") {
		t.Errorf("syntax error: err = %v", err)
	}
}

func TestCopyTrainedLayers(t *testing.T) {
	src := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	model := src.ToProto(false)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.caffemodel")
	if err := protoio.WriteProtoToBinaryFile(model, path); err != nil {
		t.Fatal(err)
	}
	dst, err := net.New[float64](parseNet(t, euclideanNet("", false)), net.Options{Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.CopyTrainedLayersFromFile(path); err != nil {
		t.Fatal(err)
	}
	for i, p := range dst.LearnableParams() {
		if !slices.Equal(p.CPUData(), src.LearnableParams()[i].CPUData()) {
			t.Errorf("param %d not copied", i)
		}
	}
	// A model whose layer has another shape is refused, naming both shapes,
	// and nothing is copied.
	wideText := strings.Replace(euclideanNet("", false), "num_output: 2", "num_output: 3", 1)
	wideText = strings.Replace(wideText, `layer { name: "loss" type: "EuclideanLoss" bottom: "ip"`,
		`layer { name: "fix" type: "InnerProduct" bottom: "ip" top: "ip2" inner_product_param { num_output: 2 } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip2"`, 1)
	wide := build(t, wideText, caffepb.Phase_TRAIN)
	before := slices.Clone(dst.LearnableParams()[0].CPUData())
	err = dst.CopyTrainedLayersFrom(wide.ToProto(false))
	if err == nil || !strings.Contains(err.Error(), `layer "ip"; shape mismatch. Source param shape is 3 3 (9); target param shape is 2 3 (6)`) {
		t.Errorf("shape mismatch: err = %v", err)
	}
	if !slices.Equal(before, dst.LearnableParams()[0].CPUData()) {
		t.Error("a refused model changed the weights")
	}
	if err := dst.CopyTrainedLayersFromFile(filepath.Join(dir, "missing.caffemodel")); err == nil {
		t.Error("a missing model file loaded")
	}
}

func TestShareTrainedLayersWith(t *testing.T) {
	train := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	test := build(t, euclideanNet("", false), caffepb.Phase_TEST)
	if err := test.ShareTrainedLayersWith(train); err != nil {
		t.Fatal(err)
	}
	if test.LayerByName("ip").LayerBase().Blobs()[0].Data() != train.LayerByName("ip").LayerBase().Blobs()[0].Data() {
		t.Error("test net does not use the train net's weights")
	}
}

func TestUpdate(t *testing.T) {
	n := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	w := n.LearnableParams()[0]
	before, diff := slices.Clone(w.CPUData()), slices.Clone(w.CPUDiff())
	if err := n.Update(); err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if w.CPUData()[i] != before[i]-diff[i] {
			t.Fatalf("Update: %v, want %v - %v", w.CPUData()[i], before[i], diff[i])
		}
	}
	if err := n.ClearParamDiffs(); err != nil || w.AsumDiff() != 0 {
		t.Errorf("ClearParamDiffs left %v (%v)", w.AsumDiff(), err)
	}
}
