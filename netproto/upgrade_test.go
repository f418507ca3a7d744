package netproto_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func readText(t *testing.T, path string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ReadProtoFromTextFile(path, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the upgrades' lines
	os.Exit(m.Run())
}

// parseNet parses a net prototxt.
func parseNet(t *testing.T, text string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatalf("net text: %v", err)
	}
	return p
}

func TestUpgradeV1(t *testing.T) {
	got, err := netproto.ReadNetParamsFromTextFile("testdata/v1_net.prototxt", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := readText(t, "testdata/v1_net_upgraded.prototxt")
	if !proto.Equal(got, want) {
		t.Errorf("upgraded V1 net:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
}

func TestUpgradeV0WithPadding(t *testing.T) {
	p := parseNet(t, `
name: "V0Net"
layers { layer { name: "data" type: "data" source: "train_lmdb" batchsize: 64 cropsize: 28 mirror: true meanfile: "mean.binaryproto" scale: 0.5 } top: "data" top: "label" }
layers { layer { name: "pad1" type: "padding" pad: 2 } bottom: "data" top: "pad1" }
layers { layer { name: "conv1" type: "conv" num_output: 96 kernelsize: 11 stride: 4 biasterm: false weight_filler { type: "gaussian" std: 0.01 } blobs_lr: 1 } bottom: "pad1" top: "conv1" }
layers { layer { name: "pool1" type: "pool" pool: MAX kernelsize: 3 stride: 2 } bottom: "conv1" top: "pool1" }
layers { layer { name: "drop" type: "dropout" dropout_ratio: 0.4 } bottom: "pool1" top: "pool1" }
layers { layer { name: "norm" type: "lrn" local_size: 3 alpha: 0.1 beta: 0.5 } bottom: "pool1" top: "norm" }`)
	if err := netproto.Upgrade(p, "v0 test", nil); err != nil {
		t.Fatal(err)
	}
	want := parseNet(t, `
name: "V0Net"
layer { name: "data" type: "Data" top: "data" top: "label"
  transform_param { scale: 0.5 mirror: true crop_size: 28 mean_file: "mean.binaryproto" }
  data_param { source: "train_lmdb" batch_size: 64 } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" param { lr_mult: 1 }
  convolution_param { num_output: 96 bias_term: false pad: 2 kernel_size: 11 stride: 4 weight_filler { type: "gaussian" std: 0.01 } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "drop" type: "Dropout" bottom: "pool1" top: "pool1" dropout_param { dropout_ratio: 0.4 } }
layer { name: "norm" type: "LRN" bottom: "pool1" top: "norm" lrn_param { local_size: 3 alpha: 0.1 beta: 0.5 } }`)
	if !proto.Equal(p, want) {
		t.Errorf("upgraded V0 net:\n%s\nwant:\n%s", prototext.Format(p), prototext.Format(want))
	}
}

func TestUpgradeErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`layers { layer { name: "x" type: "wat" } }`, `unknown V0 layer type "wat"`},
		{`layers { layer { name: "x" type: "relu" num_output: 3 } }`, `unknown parameter num_output for layer type "relu"`},
		{`input: "a" input_dim: 1 input_dim: 2`, "incorrect input blob dimension specifications"},
		{`input: "a" input_shape { dim: 1 } input_dim: 1 input_dim: 1 input_dim: 1 input_dim: 1`, "either input_shape OR deprecated input_dim"},
		{`layers { name: "x" type: RELU } layer { name: "y" type: "ReLU" }`, "both V1 'layers' and current 'layer'"},
	}
	for _, c := range cases {
		err := netproto.Upgrade(parseNet(t, c.text), "bad.prototxt", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.prototxt") {
			t.Errorf("%s: err = %v, want one containing %q", c.text, err, c.want)
		}
	}
	// BatchNorm layers with the old three parameter specs get lr_mult 0.
	p := parseNet(t, `layer { name: "bn" type: "BatchNorm" param { lr_mult: 1 } param { lr_mult: 1 } param { lr_mult: 1 decay_mult: 2 } }`)
	if err := netproto.Upgrade(p, "bn", nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Layer[0].Param {
		if s.GetLrMult() != 0 || s.GetDecayMult() != 0 {
			t.Errorf("BatchNorm param spec not zeroed: %v", s)
		}
	}
}

// TestUpgradeDataTransformationEveryDataLayer: where one V1 data layer has
// transformation fields to move, Caffe gives every V1 data layer its
// parameter and a transform_param (empty where nothing moved); the
// upgraded net is the same message as Caffe's (TestRandomUpgradesAgainstCaffe
// found the empty ones missing).
func TestUpgradeDataTransformationEveryDataLayer(t *testing.T) {
	p := parseNet(t, `layers { name: "a" type: DATA top: "x" data_param { source: "s" crop_size: 5 } }
layers { name: "b" type: IMAGE_DATA top: "y" image_data_param { source: "l" } }
layers { name: "c" type: WINDOW_DATA top: "z" }
layers { name: "d" type: RELU bottom: "x" top: "x" }`)
	if err := netproto.Upgrade(p, "net", nil); err != nil {
		t.Fatal(err)
	}
	l := p.GetLayer()
	if l[0].GetTransformParam().GetCropSize() != 5 || l[0].GetDataParam().CropSize != nil {
		t.Errorf("crop_size not moved: %v", l[0])
	}
	if l[1].TransformParam == nil || l[2].TransformParam == nil || l[2].WindowDataParam == nil {
		t.Errorf("the other data layers have no (empty) transform_param or parameter: %v; %v", l[1], l[2])
	}
	if l[3].TransformParam != nil {
		t.Errorf("a ReLU was given a transform_param: %v", l[3])
	}
}
