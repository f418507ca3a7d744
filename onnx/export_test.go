package onnx

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
	"github.com/gocaffe/gocaffe/protoio"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the nets' build logs
	os.Exit(m.Run())
}

// tolerance is the largest relative error (relativeError) allowed
// between ONNX Runtime's outputs and gocaffe's.
const tolerance = 1e-4

// randomize gives every learned blob of the net values a trained net could
// have, so that nothing the export drops or misplaces hides behind zeros or
// ones: biases, Scale's factors and shifts, PReLU's slopes and BatchNorm's
// statistics (stored, as Caffe does, multiplied by a moving-average factor)
// become random; weights keep their fillers' values, which keep deep nets'
// activations in range.
func randomize(n *net.Net[float32], seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, l := range n.Layers() {
		blobs := l.LayerBase().Blobs()
		switch l.Type() {
		case "BatchNorm":
			const factor = 3.5
			mean, variance := blobs[0].MutableCPUData(), blobs[1].MutableCPUData()
			for i := range mean {
				mean[i] = factor * float32(0.2*rng.NormFloat64())
				variance[i] = factor * float32(0.5+rng.Float64())
			}
			blobs[2].MutableCPUData()[0] = factor
		case "Scale":
			for i, b := range blobs {
				for k := range b.MutableCPUData() {
					v := 0.1 * rng.NormFloat64()
					if i == 0 && len(l.LayerBase().Param().GetBottom()) == 1 {
						v += 1
					}
					b.MutableCPUData()[k] = float32(v)
				}
			}
		case "PReLU":
			for k := range blobs[0].MutableCPUData() {
				blobs[0].MutableCPUData()[k] = float32(0.25 + 0.1*rng.NormFloat64())
			}
		default:
			for _, b := range blobs {
				if b.NumAxes() != 1 {
					continue
				}
				for k := range b.MutableCPUData() {
					b.MutableCPUData()[k] = float32(0.1 * rng.NormFloat64())
				}
			}
		}
	}
}

// zeroInputs zeroes the tops of the net's Input layers, so that those the
// model does not read (labels of dropped layers) hold valid labels.
func zeroInputs(n *net.Net[float32]) {
	for i, l := range n.Layers() {
		if l.Type() == "Input" {
			for _, b := range n.Tops(i) {
				clear(b.MutableCPUData())
			}
		}
	}
}

// randomInputs fills the net's input blobs (the tops of its data layers
// that the model reads) with standard normal values; the inputs named
// "ids" and "ids_items" (indices in the test nets) get integers from 0 to 6
// and 0 to 1.
func randomInputs(n *net.Net[float32], names []string, seed uint64) []tensor {
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []tensor
	for _, name := range names {
		b := n.BlobByName(name)
		x := b.MutableCPUData()
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			switch name {
			case "ids":
				x[i] = float32(rng.IntN(7))
			case "ids_items":
				x[i] = float32(rng.IntN(2))
			}
		}
		out = append(out, tensor{name, b.Shape(), append([]float32(nil), x...)})
	}
	return out
}

// compare runs the model in ONNX Runtime on the net's inputs and compares
// its outputs with the net's forward pass, twice: as exported, with the
// runtime's graph optimisations (what a user gets), and with every blob of
// the net whose final value the model computes declared an output too and
// no optimisation, so that a wrong layer cannot hide behind a saturated
// softmax at the end.
func compare(t *testing.T, n *net.Net[float32], m *Model, inputs []tensor) {
	t.Helper()
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	checkONNX(t, data)
	if _, err := n.Forward(); err != nil {
		t.Fatal(err)
	}
	got := runORT(t, data, inputs, true)
	if len(got) != len(m.Outputs) {
		t.Fatalf("ONNX Runtime gave %d outputs, Model.Outputs are %v", len(got), m.Outputs)
	}
	for i, o := range got {
		if o.name != m.Outputs[i] {
			t.Errorf("output %d is %q, Model.Outputs says %q", i, o.name, m.Outputs[i])
		}
		if e, ok := compareBlob(t, n, o); ok {
			t.Logf("output %s %v: relative error %.2g", o.name, o.shape, e)
		}
	}
	everything := proto.Clone(m.Proto).(*onnxpb.ModelProto)
	addBlobOutputs(everything.Graph, n)
	if data, err = proto.Marshal(everything); err != nil {
		t.Fatal(err)
	}
	worst, worstName := 0.0, ""
	got = runORT(t, data, inputs, false)
	for _, o := range got {
		if e, _ := compareBlob(t, n, o); e >= worst {
			worst, worstName = e, o.name
		}
	}
	t.Logf("all %d blobs the model computes: largest relative error %.2g (%s)", len(got), worst, worstName)
}

// compareBlob compares an output of ONNX Runtime with the blob of its
// name, failing the test beyond tolerance.
func compareBlob(t *testing.T, n *net.Net[float32], o tensor) (float64, bool) {
	t.Helper()
	want := n.BlobByName(o.name)
	if want == nil {
		t.Errorf("output %q is no blob of the net", o.name)
		return 0, false
	}
	if shapeString(o.shape) != shapeString(want.Shape()) {
		t.Errorf("output %s: shape %v, gocaffe's is %v", o.name, o.shape, want.Shape())
		return 0, false
	}
	e := relativeError(o.data, want.CPUData())
	if e > tolerance {
		t.Errorf("output %s: relative error %.3g exceeds %g", o.name, e, tolerance)
	}
	return e, true
}

// addBlobOutputs declares as graph outputs the values that carry a blob's
// name (the blob's final value) and are not outputs yet.
func addBlobOutputs(g *onnxpb.GraphProto, n *net.Net[float32]) {
	have := map[string]bool{}
	for _, o := range g.Output {
		have[o.GetName()] = true
	}
	for _, nd := range g.Node {
		for _, v := range nd.Output {
			if b := n.BlobByName(v); b != nil && !have[v] {
				g.Output = append(g.Output, valueInfo(v, b.Shape(), nil))
				have[v] = true
			}
		}
	}
}

// exportAndCompare builds the net p describes at the given batch (0: its
// own), randomizes its weights, exports it through Export (the path
// export_onnx takes: data layers replaced, weights copied from a
// NetParameter) and compares ONNX Runtime's outputs with the net's.
func exportAndCompare(t *testing.T, p *caffepb.NetParameter, batch int, opts Options) *Model {
	t.Helper()
	testState := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 1, NoMemoryReuse: true} // every blob compared with ONNX Runtime's
	trained, err := net.New[float32](p, testState)
	if err != nil {
		t.Fatal(err)
	}
	randomize(trained, 5)
	weights := trained.ToProto(false)
	reference, err := replaceDataLayers(p, trained, batch, nil)
	trained.Close()
	if err != nil {
		t.Fatal(err)
	}
	opts.Batch = batch
	m, err := Export(p, weights, opts)
	if err != nil {
		t.Fatal(err)
	}
	n, err := net.New[float32](reference, testState)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.CopyTrainedLayersFrom(weights); err != nil {
		t.Fatal(err)
	}
	zeroInputs(n)
	compare(t, n, m, randomInputs(n, m.Inputs, 3))
	return m
}

func readNet(t *testing.T, path string) *caffepb.NetParameter {
	t.Helper()
	p, err := netproto.ReadNetParamsFromTextFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func parseNet(t *testing.T, text string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModels exports the deploy nets of models/ and runs them in ONNX
// Runtime.
func TestModels(t *testing.T) {
	for _, tc := range []struct {
		dir, file string
		batch     int
	}{
		{"lenet", "lenet_deploy.prototxt", 4},
		{"cifar10_quick", "cifar10_quick.prototxt", 3},
		{"caffenet", "deploy.prototxt", 2},
		{"googlenet", "deploy.prototxt", 1},
		{"resnet50", "deploy.prototxt", 1},
		{"mobilenet", "deploy.prototxt", 2},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			if testing.Short() && tc.batch < 3 {
				t.Skip("a large net; -short")
			}
			exportAndCompare(t, readNet(t, filepath.Join("..", "models", tc.dir, tc.file)), tc.batch, Options{})
		})
	}
}

// layerNets are the test nets under testdata that together use every
// exported layer type.
var layerNets = []string{"pooling", "convolution", "elementwise", "neurons", "reductions", "forks"}

// TestLayers exports small nets that use every exported layer type, in
// its less common forms and at pooling's rounding edges, at several
// opsets.
func TestLayers(t *testing.T) {
	for _, file := range layerNets {
		for _, opset := range []int{MinOpset, 17, MaxOpset} {
			t.Run(fmt.Sprintf("%s/opset%d", file, opset), func(t *testing.T) {
				exportAndCompare(t, readNet(t, filepath.Join("testdata", file+".prototxt")), 0, Options{Opset: opset})
			})
		}
	}
}

// TestEveryTypeTested checks that the layer nets above use every type
// Types lists, so a converter added without a test is noticed.
func TestEveryTypeTested(t *testing.T) {
	used := map[string]bool{}
	for _, file := range layerNets {
		for _, l := range readNet(t, filepath.Join("testdata", file+".prototxt")).GetLayer() {
			used[l.GetType()] = true
		}
	}
	for _, typ := range Types() {
		if !used[typ] {
			t.Errorf("no test net uses layer type %s", typ)
		}
	}
}

// TestDynamicBatch exports with a symbolic batch axis and runs the model
// at a batch size other than the one it was exported with.
func TestDynamicBatch(t *testing.T) {
	for _, file := range []string{"../models/lenet/lenet_deploy.prototxt", "testdata/elementwise.prototxt"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p := readNet(t, file)
			testState := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 1, NoMemoryReuse: true} // every blob compared with ONNX Runtime's
			trained, err := net.New[float32](p, testState)
			if err != nil {
				t.Fatal(err)
			}
			randomize(trained, 9)
			weights := trained.ToProto(false)
			atThree, err := replaceDataLayers(p, trained, 3, nil)
			trained.Close()
			if err != nil {
				t.Fatal(err)
			}
			m, err := Export(p, weights, Options{Batch: 2, DynamicBatch: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range m.Proto.Graph.Input {
				if d := in.GetType().GetTensorType().GetShape().GetDim()[0]; d.GetDimParam() != BatchDim {
					t.Errorf("input %s: first axis %v, want the symbolic %q", in.GetName(), d, BatchDim)
				}
			}
			n, err := net.New[float32](atThree, testState)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			if err := n.CopyTrainedLayersFrom(weights); err != nil {
				t.Fatal(err)
			}
			compare(t, n, m, randomInputs(n, m.Inputs, 4))
		})
	}
}

// TestTrainValNet exports a train_val net: its data layer becomes the
// input (at the batch asked for), the loss and accuracy layers are left
// out and listed, and what they read becomes the output; the labels, read
// only by them, are no input.
func TestTrainValNet(t *testing.T) {
	p := readNet(t, "../models/lenet/lenet_train_test.prototxt")
	for _, l := range p.Layer {
		if l.GetType() == "Data" {
			l.Type, l.DataParam, l.TransformParam = proto.String("DummyData"), nil, nil
			l.DummyDataParam = &caffepb.DummyDataParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{100, 1, 28, 28}}, {Dim: []int64{100}}}}
		}
	}
	m := exportAndCompare(t, p, 5, Options{})
	if fmt.Sprint(m.Inputs) != "[data]" || fmt.Sprint(m.Outputs) != "[ip2]" {
		t.Errorf("inputs %v and outputs %v, want [data] and [ip2]", m.Inputs, m.Outputs)
	}
	var dropped []string
	for _, d := range m.Dropped {
		dropped = append(dropped, d.Layer+":"+d.Type)
	}
	if fmt.Sprint(dropped) != "[accuracy:Accuracy loss:SoftmaxWithLoss]" {
		t.Errorf("dropped %v, want the accuracy and the loss", dropped)
	}
	in := m.Proto.Graph.Input[0].GetType().GetTensorType().GetShape().GetDim()
	if in[0].GetDimValue() != 5 {
		t.Errorf("input batch %v, want 5", in[0])
	}
}

// TestLegacyInputs exports a deploy net in the old input/input_dim form.
func TestLegacyInputs(t *testing.T) {
	p := parseNet(t, `name: "legacy" input: "data" input_dim: 2 input_dim: 3 input_dim: 8 input_dim: 8
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: "xavier" } } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }`)
	m := exportAndCompare(t, p, 0, Options{})
	if fmt.Sprint(m.Inputs, m.Outputs) != "[data] [pool]" {
		t.Errorf("inputs %v, outputs %v", m.Inputs, m.Outputs)
	}
}

// TestUnsupported checks that layers with no faithful ONNX form are
// errors naming the layer and its type.
func TestUnsupported(t *testing.T) {
	const input = `layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 6 dim: 6 } } }
`
	for _, tc := range []struct{ layer, name, typ string }{
		{`layer { name: "stoch" type: "Pooling" bottom: "data" top: "p" pooling_param { pool: STOCHASTIC kernel_size: 2 stride: 2 } }`, "stoch", "Pooling"},
		{`layer { name: "mask" type: "Pooling" bottom: "data" top: "p" top: "m" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }`, "mask", "Pooling"},
		{`layer { name: "bn" type: "BatchNorm" bottom: "data" top: "b" batch_norm_param { use_global_stats: false } }`, "bn", "BatchNorm"},
		{`layer { name: "top3" type: "ArgMax" bottom: "data" top: "a" argmax_param { top_k: 3 } }`, "top3", "ArgMax"},
		{`layer { name: "keep" type: "Input" top: "keep" input_param { shape { dim: 2 } } }
layer { name: "filter" type: "Filter" bottom: "data" bottom: "keep" top: "f" }`, "filter", "Filter"},
	} {
		p := parseNet(t, input+tc.layer)
		_, err := Export(p, nil, Options{})
		var u *UnsupportedError
		if !errors.As(err, &u) || u.Layer != tc.name || u.Type != tc.typ {
			t.Errorf("%s: got %v, want an UnsupportedError naming layer %s (%s)", tc.name, err, tc.name, tc.typ)
			continue
		}
		t.Log(err)
	}
}

// TestDynamicBatchRefusesBatchReshape checks that a layer that would
// write the batch size into the model is an error with a dynamic batch.
func TestDynamicBatchRefusesBatchReshape(t *testing.T) {
	p := parseNet(t, `layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 } } }
layer { name: "flat" type: "Reshape" bottom: "data" top: "flat" reshape_param { shape { dim: -1 } } }`)
	if _, err := Export(p, nil, Options{}); err != nil {
		t.Fatalf("fixed batch: %v", err)
	}
	_, err := Export(p, nil, Options{DynamicBatch: true})
	var u *UnsupportedError
	if !errors.As(err, &u) || u.Layer != "flat" {
		t.Fatalf("dynamic batch: got %v, want an UnsupportedError for layer flat", err)
	}
}

// TestOpsetRange checks the opsets accepted.
func TestOpsetRange(t *testing.T) {
	p := parseNet(t, `layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 2 } } }
layer { name: "relu" type: "ReLU" bottom: "data" top: "out" }`)
	for _, v := range []int{MinOpset - 1, MaxOpset + 1} {
		if _, err := Export(p, nil, Options{Opset: v}); err == nil {
			t.Errorf("opset %d accepted", v)
		}
	}
	m, err := Export(p, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Proto.GetOpsetImport()[0].GetVersion(); v != DefaultOpset || m.Proto.GetIrVersion() != 7 {
		t.Errorf("opset %d, IR version %d; want %d and 7", v, m.Proto.GetIrVersion(), DefaultOpset)
	}
}

// TestExportFiles exports from files, as export_onnx does: a prototxt and
// its weights as a binary caffemodel and as Caffe's HDF5.
func TestExportFiles(t *testing.T) {
	dir := t.TempDir()
	model := "../models/cifar10_quick/cifar10_quick.prototxt"
	testState := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 1, NoMemoryReuse: true} // every blob compared with ONNX Runtime's
	n, err := net.NewFromFile[float32](model, testState)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	randomize(n, 12)
	binary, hdf5 := filepath.Join(dir, "w.caffemodel"), filepath.Join(dir, "w.caffemodel.h5")
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), binary); err != nil {
		t.Fatal(err)
	}
	if err := n.ToHDF5(hdf5, false); err != nil {
		t.Fatal(err)
	}
	for _, weights := range []string{binary, hdf5} {
		t.Run(filepath.Base(weights), func(t *testing.T) {
			m, err := ExportFiles(model, weights, Options{})
			if err != nil {
				t.Fatal(err)
			}
			compare(t, n, m, randomInputs(n, m.Inputs, 13))
		})
	}
}

// TestBatchLeavesOtherInputs exports at another batch size a net with an
// input that has no batch axis (a vector of means): it keeps its shape.
func TestBatchLeavesOtherInputs(t *testing.T) {
	p := parseNet(t, `layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "means" type: "Input" top: "means" input_param { shape { dim: 3 } } }
layer { name: "centred" type: "Bias" bottom: "data" bottom: "means" top: "centred" }`)
	m := exportAndCompare(t, p, 5, Options{})
	for _, in := range m.Proto.Graph.Input {
		dims := in.GetType().GetTensorType().GetShape().GetDim()
		want := map[string]int64{"data": 5, "means": 3}[in.GetName()]
		if dims[0].GetDimValue() != want {
			t.Errorf("input %s: first axis %d, want %d", in.GetName(), dims[0].GetDimValue(), want)
		}
	}
}
