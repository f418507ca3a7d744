package golden

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/randnet"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// TestRandomUpgradesAgainstCaffe writes nets in Caffe's deprecated formats
// at random: V1 (layers {...} with enum types, blobs_lr and weight_decay,
// param names and share modes, a data layer's transformation fields in its
// own parameter, input and input_dim) and V0 (layers { layer {...} } with
// string types and flat fields, padding layers before convolutions),
// upgrades each with Caffe's upgrade_net_proto_text and with
// netproto.Upgrade, and compares the two NetParameters. upgrade_net_proto_text is looked for beside
// GOCAFFE_CAFFE_BIN's caffe (the test is skipped without it);
// GOCAFFE_GOLDEN_RANDOM and GOCAFFE_GOLDEN_RANDOM_SEED as for the nets.
func TestRandomUpgradesAgainstCaffe(t *testing.T) {
	caffe := os.Getenv("GOCAFFE_CAFFE_BIN")
	if caffe == "" {
		t.Skip("GOCAFFE_CAFFE_BIN is not set: the path of BVLC Caffe's caffe binary")
	}
	tool := filepath.Join(filepath.Dir(caffe), "upgrade_net_proto_text")
	count, first := envInt(t, "GOCAFFE_GOLDEN_RANDOM", 100), envInt(t, "GOCAFFE_GOLDEN_RANDOM_SEED", 1)
	for seed := first; seed < first+count; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0xab))
		text := randomV1Net(r)
		if r.IntN(2) == 0 {
			text = randomV0Net(r)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "v1.prototxt"), filepath.Join(dir, "caffe.prototxt")
			if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tool, in, out)
			cmd.Env = append(os.Environ(), "GLOG_minloglevel=1")
			caffeOut, caffeErr := cmd.CombinedOutput()
			var got caffepb.NetParameter
			goErr := protoio.ReadProtoFromTextFile(in, &got)
			if goErr == nil {
				goErr = netproto.Upgrade(&got, in, slog.New(slog.DiscardHandler))
			}
			switch {
			case caffeErr != nil && goErr == nil:
				t.Fatalf("Caffe refuses to upgrade it (%s), gocaffe upgrades it:\n%s", fatalLine(string(caffeOut)), text)
			case caffeErr != nil:
				t.Skipf("both refuse: Caffe %s; gocaffe %v", fatalLine(string(caffeOut)), goErr)
			case goErr != nil:
				t.Fatalf("gocaffe: %v (Caffe upgrades it)\n%s", goErr, text)
			}
			var want caffepb.NetParameter
			if err := protoio.ReadProtoFromTextFile(out, &want); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&want, &got) {
				t.Errorf("upgraded nets differ:\nCaffe's:\n%s\ngocaffe's:\n%s\nthe old net:\n%s",
					prototext.Format(&want), prototext.Format(&got), text)
			}
		})
	}
}

// randomV1Net draws a V1 net of one to six layers.
func randomV1Net(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("name: \"v1\"\n")
	if r.IntN(3) == 0 {
		b.WriteString("input: \"data\"\n")
		for _, d := range []int{randnet.Between(r, 1, 4), 3, randnet.Between(r, 4, 9), randnet.Between(r, 4, 9)} {
			fmt.Fprintf(&b, "input_dim: %d\n", d)
		}
	}
	for i := range randnet.Between(r, 1, 6) {
		fmt.Fprintf(&b, "layers {\n  name: \"l%d\"\n", i)
		typ, param := randomV1Layer(r)
		fmt.Fprintf(&b, "  type: %s\n  bottom: \"data\"\n  top: \"t%d\"\n", typ, i)
		if typ == "SLICE" || typ == "CONCAT" {
			fmt.Fprintf(&b, "  top: \"u%d\"\n", i)
		}
		for range r.IntN(3) {
			fmt.Fprintf(&b, "  blobs_lr: %g\n", randnet.Pick(r, 1.0, 2.0, 0.0))
		}
		for range r.IntN(3) {
			fmt.Fprintf(&b, "  weight_decay: %g\n", randnet.Pick(r, 1.0, 0.0))
		}
		for j := range r.IntN(3) {
			fmt.Fprintf(&b, "  param: \"shared%d\"\n", j)
		}
		for range r.IntN(2) {
			fmt.Fprintf(&b, "  blob_share_mode: %s\n", randnet.Pick(r, "STRICT", "PERMISSIVE"))
		}
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "  loss_weight: %g\n", randnet.Pick(r, 1.0, 0.5))
		}
		switch r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "  include { phase: %s }\n", randnet.Pick(r, "TRAIN", "TEST"))
		case 1:
			fmt.Fprintf(&b, "  exclude { stage: %q }\n", randnet.Pick(r, "deploy", "val"))
		}
		if param != "" {
			fmt.Fprintf(&b, "  %s\n", param)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// randomV1Layer draws a V1 layer type and its parameters, the data layers'
// deprecated transformation fields among them.
func randomV1Layer(r *rand.Rand) (typ, param string) {
	transform := func() string {
		var f []string
		if r.IntN(2) == 0 {
			f = append(f, fmt.Sprintf("scale: %g", randnet.Pick(r, 0.00390625, 0.5)))
		}
		if r.IntN(2) == 0 {
			f = append(f, `mean_file: "mean.binaryproto"`)
		}
		if r.IntN(2) == 0 {
			f = append(f, fmt.Sprintf("crop_size: %d", randnet.Between(r, 1, 227)))
		}
		if r.IntN(2) == 0 {
			f = append(f, fmt.Sprintf("mirror: %v", r.IntN(2) == 0))
		}
		return strings.Join(f, " ")
	}
	switch randnet.Pick(r, "CONVOLUTION", "POOLING", "INNER_PRODUCT", "RELU", "DATA", "IMAGE_DATA", "WINDOW_DATA", "LRN",
		"SOFTMAX_LOSS", "DROPOUT", "CONCAT", "SLICE", "ELTWISE", "ACCURACY", "HDF5_DATA", "POWER", "SIGMOID", "THRESHOLD", "MVN", "SPLIT") {
	case "CONVOLUTION":
		return "CONVOLUTION", fmt.Sprintf(`convolution_param { num_output: %d kernel_size: %d stride: %d pad: %d weight_filler { type: "gaussian" std: 0.01 } }`,
			randnet.Between(r, 1, 96), randnet.Between(r, 1, 11), randnet.Between(r, 1, 4), randnet.Between(r, 0, 2))
	case "POOLING":
		return "POOLING", fmt.Sprintf("pooling_param { pool: %s kernel_size: %d stride: %d }", randnet.Pick(r, "MAX", "AVE"), randnet.Between(r, 2, 3), randnet.Between(r, 1, 2))
	case "INNER_PRODUCT":
		return "INNER_PRODUCT", fmt.Sprintf(`inner_product_param { num_output: %d bias_filler { type: "constant" value: 0.1 } }`, randnet.Between(r, 1, 4096))
	case "DATA":
		return "DATA", fmt.Sprintf(`data_param { source: "train_lmdb" backend: %s batch_size: %d %s }`, randnet.Pick(r, "LMDB", "LEVELDB"), randnet.Between(r, 1, 256), transform())
	case "IMAGE_DATA":
		return "IMAGE_DATA", fmt.Sprintf(`image_data_param { source: "list.txt" batch_size: %d shuffle: %v new_height: %d %s }`, randnet.Between(r, 1, 64), r.IntN(2) == 0, randnet.Between(r, 0, 256), transform())
	case "WINDOW_DATA":
		return "WINDOW_DATA", fmt.Sprintf(`window_data_param { source: "windows.txt" batch_size: %d fg_threshold: 0.5 %s }`, randnet.Between(r, 1, 128), transform())
	case "HDF5_DATA":
		return "HDF5_DATA", fmt.Sprintf(`hdf5_data_param { source: "h5.txt" batch_size: %d }`, randnet.Between(r, 1, 64))
	case "LRN":
		return "LRN", fmt.Sprintf("lrn_param { local_size: %d alpha: 0.0001 beta: 0.75 }", randnet.Pick(r, 3, 5))
	case "DROPOUT":
		return "DROPOUT", fmt.Sprintf("dropout_param { dropout_ratio: %g }", randnet.Pick(r, 0.5, 0.3))
	case "SLICE":
		return "SLICE", fmt.Sprintf("slice_param { slice_dim: %d }", randnet.Between(r, 0, 1))
	case "CONCAT":
		return "CONCAT", fmt.Sprintf("concat_param { concat_dim: %d }", randnet.Between(r, 0, 1))
	case "ELTWISE":
		return "ELTWISE", fmt.Sprintf("eltwise_param { operation: %s }", randnet.Pick(r, "SUM", "PROD", "MAX"))
	case "ACCURACY":
		return "ACCURACY", fmt.Sprintf("accuracy_param { top_k: %d }", randnet.Between(r, 1, 5))
	case "POWER":
		return "POWER", fmt.Sprintf("power_param { power: %g scale: %g }", randnet.Pick(r, 2.0, 0.5), randnet.Pick(r, 1.0, 0.1))
	case "THRESHOLD":
		return "THRESHOLD", fmt.Sprintf("threshold_param { threshold: %g }", randnet.Pick(r, 0.5, 0.0))
	case "MVN":
		return "MVN", fmt.Sprintf("mvn_param { across_channels: %v }", r.IntN(2) == 0)
	case "RELU":
		return "RELU", randnet.Pick(r, "", "relu_param { negative_slope: 0.1 }")
	}
	return randnet.Pick(r, "SOFTMAX_LOSS", "SIGMOID", "SPLIT"), ""
}

// randomV0Net draws a net in Caffe's first format (layers { layer { ... } }
// with string types and flat fields), a data layer then a chain of one to
// six layers, padding layers before convolutions among them (the upgrade
// folds them into the convolution's pad).
func randomV0Net(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("name: \"v0\"\n")
	v0 := func(name, fields, bottom, top string) {
		fmt.Fprintf(&b, "layers {\n  layer { name: %q %s }\n", name, fields)
		if bottom != "" {
			fmt.Fprintf(&b, "  bottom: %q\n", bottom)
		}
		fmt.Fprintf(&b, "  top: %q\n}\n", top)
	}
	data := randnet.Pick(r, "data", "images", "window_data", "hdf5_data")
	fields := fmt.Sprintf(`type: %q source: "src" batchsize: %d`, data, randnet.Between(r, 1, 256))
	if data != "hdf5_data" {
		if r.IntN(2) == 0 {
			fields += fmt.Sprintf(" scale: %g", randnet.Pick(r, 0.00390625, 2.0))
		}
		if r.IntN(2) == 0 {
			fields += ` meanfile: "mean.binaryproto"`
		}
		if r.IntN(2) == 0 {
			fields += fmt.Sprintf(" cropsize: %d mirror: %v", randnet.Between(r, 1, 227), r.IntN(2) == 0)
		}
	}
	if data == "images" && r.IntN(2) == 0 {
		fields += fmt.Sprintf(" new_height: %d new_width: %d shuffle_images: %v", randnet.Between(r, 1, 256), randnet.Between(r, 1, 256), r.IntN(2) == 0)
	}
	if data == "window_data" && r.IntN(2) == 0 {
		fields += fmt.Sprintf(" det_fg_threshold: %g det_context_pad: %d det_crop_mode: %q", randnet.Pick(r, 0.5, 0.7), randnet.Between(r, 0, 16), randnet.Pick(r, "warp", "square"))
	}
	if data == "data" && r.IntN(2) == 0 {
		fields += fmt.Sprintf(" rand_skip: %d", randnet.Between(r, 1, 100))
	}
	v0("data", fields, "", "x0")
	cur := "x0"
	for i := range randnet.Between(r, 1, 6) {
		top := fmt.Sprintf("x%d", i+1)
		name := fmt.Sprintf("l%d", i)
		lr := ""
		for range r.IntN(3) {
			lr += fmt.Sprintf(" blobs_lr: %g", randnet.Pick(r, 1.0, 2.0))
		}
		for range r.IntN(3) {
			lr += fmt.Sprintf(" weight_decay: %g", randnet.Pick(r, 1.0, 0.0))
		}
		switch randnet.Pick(r, "conv", "padconv", "pool", "relu", "innerproduct", "lrn", "dropout", "tanh", "softmax") {
		case "padconv":
			v0(name+"_pad", fmt.Sprintf(`type: "padding" pad: %d`, randnet.Between(r, 1, 3)), cur, name+"_padded")
			cur = name + "_padded"
			fallthrough
		case "conv":
			v0(name, fmt.Sprintf(`type: "conv" num_output: %d kernelsize: %d stride: %d group: %d biasterm: %v weight_filler { type: "gaussian" std: 0.01 }%s`,
				randnet.Between(r, 1, 96), randnet.Between(r, 1, 11), randnet.Between(r, 1, 4), randnet.Pick(r, 1, 1, 2), r.IntN(4) > 0, lr), cur, top)
		case "pool":
			v0(name, fmt.Sprintf(`type: "pool" pool: %s kernelsize: %d stride: %d`, randnet.Pick(r, "MAX", "AVE"), randnet.Between(r, 2, 3), randnet.Between(r, 1, 2)), cur, top)
		case "relu", "tanh":
			v0(name, fmt.Sprintf("type: %q", randnet.Pick(r, "relu", "tanh")), cur, cur)
			continue
		case "innerproduct":
			v0(name, fmt.Sprintf(`type: "innerproduct" num_output: %d bias_filler { type: "constant" value: 0.1 }%s`, randnet.Between(r, 1, 4096), lr), cur, top)
		case "lrn":
			v0(name, fmt.Sprintf("type: \"lrn\" local_size: %d alpha: %g beta: %g k: %g", randnet.Pick(r, 3, 5), randnet.Pick(r, 0.0001, 1.0), randnet.Pick(r, 0.75, 0.5), randnet.Pick(r, 1.0, 2.0)), cur, top)
		case "dropout":
			v0(name, fmt.Sprintf("type: \"dropout\" dropout_ratio: %g", randnet.Pick(r, 0.5, 0.3)), cur, cur)
			continue
		default:
			v0(name, `type: "softmax"`, cur, top)
		}
		cur = top
	}
	return b.String()
}
