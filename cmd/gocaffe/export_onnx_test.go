package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
	"github.com/gocaffe/gocaffe/protoio"
)

// TestExportONNX runs export_onnx on LeNet's deploy net and weights and
// reads the file back: the batch asked for, the inputs and outputs, and
// conv1's weights as the caffemodel holds them. (Package onnx runs its
// exports in ONNX Runtime.)
func TestExportONNX(t *testing.T) {
	dir := t.TempDir()
	model := "../../models/lenet/lenet_deploy.prototxt"
	n, err := net.NewFromFile[float32](model, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	conv1 := append([]float32(nil), n.LayerByName("conv1").LayerBase().Blobs()[0].CPUData()...)
	weights := filepath.Join(dir, "lenet.caffemodel")
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), weights); err != nil {
		t.Fatal(err)
	}
	n.Close()
	out := filepath.Join(dir, "lenet.onnx")
	if code, _, stderr := runCmd("export_onnx", "-model", model, "-weights", weights, "-o", out, "-batch", "3", "-opset", "17"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatal(err)
	}
	g := m.GetGraph()
	if v := m.GetOpsetImport()[0].GetVersion(); v != 17 {
		t.Errorf("opset %d, want 17", v)
	}
	if len(g.Input) != 1 || g.Input[0].GetName() != "data" || len(g.Output) != 1 || g.Output[0].GetName() != "prob" {
		t.Fatalf("inputs %v, outputs %v", g.Input, g.Output)
	}
	if d := g.Input[0].GetType().GetTensorType().GetShape().GetDim()[0].GetDimValue(); d != 3 {
		t.Errorf("batch %d, want 3", d)
	}
	found := false
	for _, init := range g.Initializer {
		if init.GetName() != "conv1/weight" {
			continue
		}
		found = true
		raw := init.GetRawData()
		if len(raw) != 4*len(conv1) {
			t.Fatalf("conv1/weight holds %d bytes, want %d", len(raw), 4*len(conv1))
		}
		for i, w := range conv1 {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != w {
				t.Fatalf("conv1/weight[%d] = %v, the caffemodel has %v", i, got, w)
			}
		}
	}
	if !found {
		t.Error("no conv1/weight initializer")
	}
}

// TestExportONNXErrors checks export_onnx's refusals: an unsupported layer
// (exit 1 naming it), a bad -batch and opset, missing flags (usage, exit 2).
func TestExportONNXErrors(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "net.prototxt")
	os.WriteFile(model, []byte(`layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "sampler" type: "Pooling" bottom: "data" top: "p" pooling_param { pool: STOCHASTIC kernel_size: 2 stride: 2 } }
`), 0o644)
	out := filepath.Join(dir, "x.onnx")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-model", model, "-o", out}, 1, `layer "sampler" (Pooling) cannot be exported to ONNX`},
		{[]string{"-model", "../../models/lenet/lenet_deploy.prototxt", "-o", out, "-batch", "zero"}, 1, "-batch"},
		{[]string{"-model", "../../models/lenet/lenet_deploy.prototxt", "-o", out, "-opset", "9"}, 1, "opset 9"},
		{[]string{"-model", model}, 2, "need -model and -o"},
	} {
		code, _, stderr := runCmd(append([]string{"export_onnx"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused export left %s behind", out)
	}
}

// TestSkipUnknownFieldsFlag runs a net with a field of a fork gocaffe does
// not know: an error naming line and field, and with -skip_unknown_fields
// a warning and a run.
func TestSkipUnknownFieldsFlag(t *testing.T) {
	model := filepath.Join(t.TempDir(), "net.prototxt")
	os.WriteFile(model, []byte(`layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 } quantization_param { bw_layer_out: 8 } }
`), 0o644)
	code, _, stderr := runCmd("time", "-model", model, "-iterations", "1")
	if code != 1 || !strings.Contains(stderr, `line 3: unknown field "quantization_param"`) || !strings.Contains(stderr, "Ristretto") {
		t.Errorf("without the flag: exit %d, stderr %q", code, stderr)
	}
	log := captureLog(t)
	code, _, stderr = runCmd("time", "-model", model, "-iterations", "1", "-skip_unknown_fields")
	if code != 0 || !strings.Contains(log.String(), `line 3: skipping unknown field "quantization_param"`) {
		t.Errorf("with the flag: exit %d, stderr %q, log %q", code, stderr, log.String())
	}
}
