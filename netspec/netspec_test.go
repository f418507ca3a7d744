package netspec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/netspec"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// lenet writes models/lenet/lenet_train_test.prototxt in Go.
func lenet() *netspec.Net {
	n := netspec.New("LeNet")
	var data, label netspec.Blob
	for _, ph := range []struct {
		phase  caffepb.Phase
		source string
		batch  uint32
	}{{caffepb.Phase_TRAIN, "examples/lenet/fashion_mnist_train_lmdb", 64}, {caffepb.Phase_TEST, "examples/lenet/fashion_mnist_test_lmdb", 100}} {
		tops := n.Tops("data", "Data", nil, []string{"data", "label"}, func(l *caffepb.LayerParameter) {
			l.Include = []*caffepb.NetStateRule{netspec.Phase(ph.phase)}
			l.TransformParam = &caffepb.TransformationParameter{Scale: proto.Float32(0.00390625)}
			l.DataParam = &caffepb.DataParameter{Source: proto.String(ph.source), BatchSize: proto.Uint32(ph.batch), Backend: caffepb.DataParameter_LMDB.Enum()}
		})
		data, label = tops[0], tops[1]
	}
	learnable := []*caffepb.ParamSpec{{LrMult: proto.Float32(1)}, {LrMult: proto.Float32(2)}}
	conv := func(name string, bottom netspec.Blob, out uint32) netspec.Blob {
		return n.Layer(name, "Convolution", netspec.On(bottom), func(l *caffepb.LayerParameter) {
			l.Param = learnable
			l.ConvolutionParam = &caffepb.ConvolutionParameter{NumOutput: proto.Uint32(out), KernelSize: []uint32{5}, Stride: []uint32{1},
				WeightFiller: netspec.Filler("xavier"), BiasFiller: netspec.Filler("constant")}
		})
	}
	pool := func(name string, bottom netspec.Blob) netspec.Blob {
		return n.Layer(name, "Pooling", netspec.On(bottom), func(l *caffepb.LayerParameter) {
			l.PoolingParam = &caffepb.PoolingParameter{Pool: caffepb.PoolingParameter_MAX.Enum(), KernelSize: proto.Uint32(2), Stride: proto.Uint32(2)}
		})
	}
	ip := func(name string, bottom netspec.Blob, out uint32) netspec.Blob {
		return n.Layer(name, "InnerProduct", netspec.On(bottom), func(l *caffepb.LayerParameter) {
			l.Param = learnable
			l.InnerProductParam = &caffepb.InnerProductParameter{NumOutput: proto.Uint32(out), WeightFiller: netspec.Filler("xavier"), BiasFiller: netspec.Filler("constant")}
		})
	}
	x := pool("pool2", conv("conv2", pool("pool1", conv("conv1", data, 20)), 50))
	x = n.InPlace("relu1", "ReLU", ip("ip1", x, 500), nil)
	x = ip("ip2", x, 10)
	n.Layer("accuracy", "Accuracy", netspec.On(x, label), func(l *caffepb.LayerParameter) {
		l.Include = []*caffepb.NetStateRule{netspec.Phase(caffepb.Phase_TEST)}
	})
	n.Layer("loss", "SoftmaxWithLoss", netspec.On(x, label), nil)
	return n
}

// The LeNet of models/ written in Go is the committed file's net, and its
// text reads back to the same net.
func TestLeNetFromGo(t *testing.T) {
	var want caffepb.NetParameter
	if err := protoio.ReadProtoFromTextFile("../models/lenet/lenet_train_test.prototxt", &want); err != nil {
		t.Fatal(err)
	}
	got, err := lenet().Proto()
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, &want) {
		t.Fatalf("netspec's LeNet differs from the model file:\n%s", netspec.Text(got))
	}
	text, err := lenet().Prototxt()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "name: \"LeNet\"\nlayer {\n  name: \"data\"\n  type: \"Data\"\n  top: \"data\"\n  top: \"label\"\n  include {\n    phase: TRAIN\n  }\n  transform_param {\n    scale: 0.00390625\n  }\n") {
		t.Errorf("text not in Caffe's layout:\n%s", text[:300])
	}
	path := filepath.Join(t.TempDir(), "lenet.prototxt")
	if err := lenet().WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var back caffepb.NetParameter
	if err := protoio.ReadProtoFromTextFile(path, &back); err != nil || !proto.Equal(&back, &want) {
		t.Errorf("written file reads back as another net: %v", err)
	}
}

// Text writes every model of the repository (and a solver) so that it
// reads back equal, fields by number as C++ prints them (LayerParameter's
// phase, number 10, after include and exclude).
func TestTextRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("../models/*/*.prototxt")
	if len(files) < 10 {
		t.Fatalf("found %d model files", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var m proto.Message = &caffepb.NetParameter{}
		if strings.Contains(f, "solver") {
			m = &caffepb.SolverParameter{}
		}
		if err := protoio.ParseText(b, m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back := m.ProtoReflect().New().Interface()
		if err := protoio.ParseText([]byte(netspec.Text(m)), back); err != nil || !proto.Equal(back, m) {
			t.Errorf("%s: Text does not read back: %v", f, err)
		}
	}
	l := &caffepb.LayerParameter{Name: proto.String("a\"b\n\xff"), Phase: caffepb.Phase_TEST.Enum(), Include: []*caffepb.NetStateRule{netspec.Phase(caffepb.Phase_TRAIN)},
		LossWeight: []float32{1e-5, 2}}
	want := "name: \"a\\\"b\\n\\377\"\nloss_weight: 1e-05\nloss_weight: 2\ninclude {\n  phase: TRAIN\n}\nphase: TEST\n"
	if got := netspec.Text(l); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

// A bottom from another net is an error at Proto.
func TestForeignBottom(t *testing.T) {
	a, b := netspec.New("a"), netspec.New("b")
	x := a.Layer("x", "Input", nil, nil)
	b.Layer("r", "ReLU", netspec.On(x), nil)
	if _, err := b.Proto(); err == nil || !strings.Contains(err.Error(), `bottom "x" is not a blob of net "b"`) {
		t.Errorf("err = %v", err)
	}
}
