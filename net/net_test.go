package net_test

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

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

// A V1 net is upgraded on load, builds and runs.
func TestV1NetBuilds(t *testing.T) {
	n, err := net.NewFromFile[float32]("../netproto/testdata/v1_net.prototxt", net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
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

// A layer type that cannot compute in place is refused in place, naming
// the layer, its type and the blob; one that can is accepted.
func TestInPlaceRefused(t *testing.T) {
	for _, c := range []struct {
		layer string
		ok    bool
	}{
		{`layer { name: "pool" type: "Pooling" bottom: "data" top: "data" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }`, false},
		{`layer { name: "ip" type: "InnerProduct" bottom: "data" top: "data" inner_product_param { num_output: 3 } }`, false},
		{`layer { name: "abs" type: "AbsVal" bottom: "data" top: "data" }`, false},
		{`layer { name: "relu" type: "ReLU" bottom: "data" top: "data" }`, true},
	} {
		text := `layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }` + "\n" + c.layer
		n, err := net.New[float32](parseNet(t, text), net.Options{})
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", c.layer, err)
			} else {
				n.Close()
			}
			continue
		}
		l := layertestName(c.layer)
		want := fmt.Sprintf(`layer %q (%s) cannot compute in place: top "data" is its bottom`, l[0], l[1])
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", c.layer, err, want)
		}
	}
}

// layertestName returns the name and type in a layer's text.
func layertestName(text string) [2]string {
	var out [2]string
	for i, key := range []string{`name: "`, `type: "`} {
		s := text[strings.Index(text, key)+len(key):]
		out[i] = s[:strings.Index(s, `"`)]
	}
	return out
}

// As Caffe's Net::Init, for every layer type: more param specs than the
// layer has learnable blobs is an error naming the layer ("Too many params
// specified for layer"), not a warning; as many or fewer are fine.
func TestTooManyParamSpecs(t *testing.T) {
	data := `layer { name: "data" type: "DummyData" top: "x" dummy_data_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
`
	for _, c := range []struct {
		name, layer string
		ok          bool
	}{
		{"inner product, three for two", `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" param { lr_mult: 1 } param { lr_mult: 2 } param { lr_mult: 3 } inner_product_param { num_output: 2 } }`, false},
		{"inner product without bias, two for one", `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" param { lr_mult: 1 } param { lr_mult: 2 } inner_product_param { num_output: 2 bias_term: false } }`, false},
		{"convolution without bias, two for one", `layer { name: "conv" type: "Convolution" bottom: "x" top: "y" param { lr_mult: 1 } param { lr_mult: 2 } convolution_param { num_output: 2 kernel_size: 1 bias_term: false } }`, false},
		{"ReLU, one for none", `layer { name: "relu" type: "ReLU" bottom: "x" top: "y" param { lr_mult: 1 } }`, false},
		{"batch norm, four for three", `layer { name: "bn" type: "BatchNorm" bottom: "x" top: "y" param { lr_mult: 0 } param { lr_mult: 0 } param { lr_mult: 0 } param { lr_mult: 0 } }`, false},
		{"inner product, two for two", `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" param { lr_mult: 1 } param { lr_mult: 2 } inner_product_param { num_output: 2 } }`, true},
		{"inner product, one for two", `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" param { lr_mult: 1 } inner_product_param { num_output: 2 } }`, true},
		{"batch norm, three for three", `layer { name: "bn" type: "BatchNorm" bottom: "x" top: "y" param { lr_mult: 0 } param { lr_mult: 0 } param { lr_mult: 0 } }`, true},
	} {
		n, err := net.New[float32](parseNet(t, data+c.layer), net.Options{})
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else {
				n.Close()
			}
			continue
		}
		name := regexp.MustCompile(`name: "(\w+)" type: "(\w+)" bottom`).FindStringSubmatch(c.layer)
		if err == nil {
			n.Close()
			t.Errorf("%s: accepted", c.name)
		} else if want := fmt.Sprintf("layer %q (%s): too many params specified", name[1], name[2]); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, want)
		}
	}
}

// A shared parameter's gradient is complete after the lowest layer using
// it; SetAfterBackward hears of every layer, top down.
func TestLearnableParamsDoneAfter(t *testing.T) {
	n := build(t, `
name: "shared"
force_backward: true
layer { name: "data" type: "DummyData" top: "x" top: "y"
  dummy_data_param { shape { dim: 2 dim: 4 } shape { dim: 2 dim: 4 } data_filler { type: "gaussian" } } }
layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "a" param { name: "w" } param { }
  inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
layer { name: "ip2" type: "InnerProduct" bottom: "a" top: "b"
  inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
layer { name: "ip3" type: "InnerProduct" bottom: "b" top: "c" param { name: "w" } param { }
  inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "c" bottom: "y" top: "loss" }`, caffepb.Phase_TRAIN)
	// Learnable: ip1's w (shared by ip3) and bias, ip2's two, ip3's bias.
	if got, want := n.LearnableParamsDoneAfter(), []int{1, 1, 2, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("LearnableParamsDoneAfter() = %v, want %v", got, want)
	}
	var seen []int
	n.SetAfterBackward(func(i int) error { seen = append(seen, i); return nil })
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	if want := []int{4, 3, 2, 1, 0}; !slices.Equal(seen, want) {
		t.Errorf("after-backward calls %v, want %v", seen, want)
	}
	n.SetAfterBackward(func(i int) error { return fmt.Errorf("stop at %d", i) })
	if err := n.Backward(); err == nil || err.Error() != "stop at 4" {
		t.Errorf("an error from the hook: Backward returned %v", err)
	}
	n.SetAfterBackward(nil)
	if err := n.Backward(); err != nil {
		t.Error(err)
	}
}
