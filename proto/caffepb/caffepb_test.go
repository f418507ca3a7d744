package caffepb

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func parseFile(t *testing.T, path string, m proto.Message) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := prototext.Unmarshal(text, m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestEveryLayerParameterParses parses a net with one layer for each of
// LayerParameter's parameter messages and checks that none is missing from
// the files, so adding a parameter to the schema without covering it fails:
// BVLC's in all_layers.prototxt, the forks' in fork_layers.prototxt.
func TestEveryLayerParameterParses(t *testing.T) {
	var net, forks NetParameter
	parseFile(t, "testdata/all_layers.prototxt", &net)
	parseFile(t, "testdata/fork_layers.prototxt", &forks)
	fields := (&LayerParameter{}).ProtoReflect().Descriptor().Fields()
	checked := 0
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.MessageKind || !strings.HasSuffix(string(fd.Name()), "_param") {
			continue
		}
		checked++
		found := false
		for _, l := range append(net.GetLayer(), forks.GetLayer()...) {
			m := l.ProtoReflect()
			if m.Has(fd) {
				sub := m.Get(fd).Message()
				populated := 0
				sub.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool { populated++; return true })
				if populated == 0 {
					t.Errorf("layer %q sets %s with no fields", l.GetName(), fd.Name())
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no layer in all_layers.prototxt or fork_layers.prototxt sets %s", fd.Name())
		}
	}
	if checked < 49 {
		t.Errorf("LayerParameter has only %d *_param fields, Caffe 1.0 has 49", checked)
	}
	if got := len(net.GetLayers()); got != 3 {
		t.Errorf("%d V1 layers parsed, want 3", got)
	}
	v0 := net.GetLayers()[2].GetLayer()
	if v0.GetType() != "conv" || v0.GetKernelsize() != 3 || v0.GetBiasterm() {
		t.Errorf("V0 layer parsed wrong: %v", v0)
	}
	conv := net.GetLayer()[8]
	if conv.GetConvolutionParam().GetKernelSize()[0] != 5 || conv.GetParam()[0].GetShareMode() != ParamSpec_PERMISSIVE {
		t.Errorf("convolution layer parsed wrong: %v", conv)
	}
}

func TestSolverParses(t *testing.T) {
	var s SolverParameter
	parseFile(t, "testdata/solver.prototxt", &s)
	if s.GetNet() != "train_val.prototxt" || s.GetTestIter()[0] != 100 || s.GetType() != "Nesterov" ||
		s.GetSolverMode() != SolverParameter_CPU || len(s.GetStepvalue()) != 2 || s.GetRandomSeed() != 1701 {
		t.Errorf("solver parsed wrong: %v", &s)
	}
	// Unset fields read as Caffe's defaults.
	if s.GetDelta() != 1e-8 || s.GetMomentum2() != 0.999 || s.GetRmsDecay() != 0.99 || !s.GetSnapshotAfterTrain() {
		t.Errorf("solver defaults wrong: delta %v momentum2 %v rms_decay %v", s.GetDelta(), s.GetMomentum2(), s.GetRmsDecay())
	}
}

// TestDefaults spot-checks the defaults that layers depend on.
func TestDefaults(t *testing.T) {
	checks := []struct {
		name      string
		got, want any
	}{
		{"FillerParameter.type", (&FillerParameter{}).GetType(), "constant"},
		{"FillerParameter.std", (&FillerParameter{}).GetStd(), float32(1)},
		{"FillerParameter.sparse", (&FillerParameter{}).GetSparse(), int32(-1)},
		{"NetState.phase", (&NetState{}).GetPhase(), Phase_TEST},
		{"ParamSpec.lr_mult", (&ParamSpec{}).GetLrMult(), float32(1)},
		{"ConvolutionParameter.bias_term", (&ConvolutionParameter{}).GetBiasTerm(), true},
		{"ConvolutionParameter.group", (&ConvolutionParameter{}).GetGroup(), uint32(1)},
		{"PoolingParameter.stride", (&PoolingParameter{}).GetStride(), uint32(1)},
		{"PoolingParameter.round_mode", (&PoolingParameter{}).GetRoundMode(), PoolingParameter_CEIL},
		{"LRNParameter.beta", (&LRNParameter{}).GetBeta(), float32(0.75)},
		{"LossParameter.normalization", (&LossParameter{}).GetNormalization(), LossParameter_VALID},
		{"BatchNormParameter.moving_average_fraction", (&BatchNormParameter{}).GetMovingAverageFraction(), float32(0.999)},
		{"DataParameter.backend", (&DataParameter{}).GetBackend(), DataParameter_LEVELDB},
		{"DataParameter.prefetch", (&DataParameter{}).GetPrefetch(), uint32(4)},
		{"ExpParameter.base", (&ExpParameter{}).GetBase(), float32(-1)},
		{"SolverParameter.solver_mode", (&SolverParameter{}).GetSolverMode(), SolverParameter_GPU},
		{"SolverParameter.random_seed", (&SolverParameter{}).GetRandomSeed(), int64(-1)},
		{"SolverParameter.clip_gradients", (&SolverParameter{}).GetClipGradients(), float32(-1)},
		{"SolverParameter.regularization_type", (&SolverParameter{}).GetRegularizationType(), "L2"},
		{"SolverParameter.test_initialization", (&SolverParameter{}).GetTestInitialization(), true},
		{"ReshapeParameter.num_axes", (&ReshapeParameter{}).GetNumAxes(), int32(-1)},
		{"CropParameter.axis", (&CropParameter{}).GetAxis(), int32(2)},
		{"WindowDataParameter.crop_mode", (&WindowDataParameter{}).GetCropMode(), "warp"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s default = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestFieldNumbers spot-checks wire numbers that Caffe files depend on.
func TestFieldNumbers(t *testing.T) {
	num := func(m proto.Message, field string) protoreflect.FieldNumber {
		fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(field))
		if fd == nil {
			t.Fatalf("%s has no field %s", m.ProtoReflect().Descriptor().FullName(), field)
		}
		return fd.Number()
	}
	checks := []struct {
		m     proto.Message
		field string
		want  protoreflect.FieldNumber
	}{
		{&NetParameter{}, "layer", 100}, {&NetParameter{}, "layers", 2},
		{&BlobProto{}, "shape", 7}, {&BlobProto{}, "double_data", 8},
		{&LayerParameter{}, "convolution_param", 106}, {&LayerParameter{}, "clip_param", 148},
		{&LayerParameter{}, "swish_param", 147}, {&LayerParameter{}, "transform_param", 100},
		{&SolverParameter{}, "weights", 42}, {&SolverParameter{}, "layer_wise_reduce", 41},
		{&V1LayerParameter{}, "param", 1001}, {&V0LayerParameter{}, "hdf5_output_param", 1001},
		{&SolverState{}, "current_step", 4},
	}
	for _, c := range checks {
		if got := num(c.m, c.field); got != c.want {
			t.Errorf("%s.%s = %d, want %d", c.m.ProtoReflect().Descriptor().Name(), c.field, got, c.want)
		}
	}
	if !(&BlobShape{}).ProtoReflect().Descriptor().Fields().ByName("dim").IsPacked() {
		t.Error("BlobShape.dim is not packed")
	}
	if (&Datum{}).ProtoReflect().Descriptor().Fields().ByName("float_data").IsPacked() {
		t.Error("Datum.float_data is packed; Caffe's is not")
	}
}

// protoc runs protoc on caffe.proto with the given mode (--decode=... or
// --encode=...) and input.
func protoc(t *testing.T, mode string, input []byte) []byte {
	t.Helper()
	path, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (Debian: protobuf-compiler); .ci/run installs it")
	}
	cmd := exec.Command(path, "-I..", mode, "../caffe.proto")
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc %s: %v: %s", mode, err, stderr.String())
	}
	return out
}

// noUnknownFields fails if any message inside m carries fields its schema
// does not know.
func noUnknownFields(t *testing.T, m protoreflect.Message, path string) {
	t.Helper()
	if u := m.GetUnknown(); len(u) > 0 {
		t.Errorf("%s has %d bytes of unknown fields", path, len(u))
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind:
		case fd.IsList():
			for i := range v.List().Len() {
				noUnknownFields(t, v.List().Get(i).Message(), path+"."+string(fd.Name()))
			}
		default:
			noUnknownFields(t, v.Message(), path+"."+string(fd.Name()))
		}
		return true
	})
}

// TestProtocAgreement checks the Go types against protoc's reading of
// caffe.proto, both ways: protoc decodes what Go encodes back to the same
// message, and protoc encodes Go's text to exactly Go's bytes, with no
// unknown fields on either side.
func TestProtocAgreement(t *testing.T) {
	var net NetParameter
	parseFile(t, "testdata/all_layers.prototxt", &net)
	net.Layer = append(net.Layer, &LayerParameter{
		Name:  proto.String("with_blobs"),
		Blobs: []*BlobProto{{Shape: &BlobShape{Dim: []int64{2}}, Data: []float32{1.5, -2}, DoubleDiff: []float64{0.1, 1e-300}}},
	})
	var solver SolverParameter
	parseFile(t, "testdata/solver.prototxt", &solver)
	solver.TrainNetParam = &net
	state := &SolverState{Iter: proto.Int32(5000), LearnedNet: proto.String("x_iter_5000.caffemodel"), CurrentStep: proto.Int32(1),
		History: []*BlobProto{{Shape: &BlobShape{Dim: []int64{3}}, Data: []float32{0, 1, 2}}}}
	datum := &Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), Data: []byte{0, 255, 7, 9}, Label: proto.Int32(3), FloatData: []float32{1, 2}}
	// The forks' files: a net with every fork layer parameter and NVCaffe's
	// raw half-precision blobs, an SSD solver state, an SSD annotated datum.
	var forks NetParameter
	parseFile(t, "testdata/fork_layers.prototxt", &forks)
	forks.Layer = append(forks.Layer, &LayerParameter{Name: proto.String("nvcaffe_blobs"),
		Blobs: []*BlobProto{{Shape: &BlobShape{Dim: []int64{2}}, RawDataType: Type_FLOAT16.Enum(), RawData: []byte{0, 0x3c, 0, 0xc0}}}})
	ssdState := &SolverState{Iter: proto.Int32(120000), LearnedNet: proto.String("ssd_iter_120000.caffemodel"), MinimumLoss: proto.Float32(2.5), IterLastEvent: proto.Int32(118000)}
	annotated := &AnnotatedDatum{Datum: datum, Type: AnnotatedDatum_BBOX.Enum(), AnnotationGroup: []*AnnotationGroup{{GroupLabel: proto.Int32(12),
		Annotation: []*Annotation{{InstanceId: proto.Int32(0), Bbox: &NormalizedBBox{Xmin: proto.Float32(0.1), Ymin: proto.Float32(0.2), Xmax: proto.Float32(0.5), Ymax: proto.Float32(0.9), Difficult: proto.Bool(true)}}}}}}

	for i, m := range []proto.Message{&net, &solver, state, datum, &forks, ssdState, annotated} {
		name := string(m.ProtoReflect().Descriptor().FullName())
		t.Run(fmt.Sprintf("%d-%s", i, name), func(t *testing.T) {
			wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			// Go bytes -> protoc text -> Go.
			text := protoc(t, "--decode="+name, wire)
			back := m.ProtoReflect().New().Interface()
			if err := prototext.Unmarshal(text, back); err != nil {
				t.Fatalf("Go cannot read protoc's decoding (unknown field?): %v\n%s", err, text)
			}
			if !proto.Equal(m, back) {
				t.Errorf("protoc decoded a different %s", name)
			}
			// Go text -> protoc bytes -> Go.
			goText, err := prototext.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			protocWire := protoc(t, "--encode="+name, goText)
			if !bytes.Equal(protocWire, wire) {
				t.Errorf("protoc encodes %d bytes where Go encodes %d different ones", len(protocWire), len(wire))
			}
			decoded := m.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(protocWire, decoded); err != nil {
				t.Fatal(err)
			}
			noUnknownFields(t, decoded.ProtoReflect(), name)
			if !proto.Equal(m, decoded) {
				t.Errorf("Go decodes protoc's encoding to a different %s", name)
			}
		})
	}
}

func TestTextErrorsHaveLineAndColumn(t *testing.T) {
	text := "name: \"x\"\nlayer {\n  name: \"a\" typo_field: 3\n}\n"
	err := prototext.Unmarshal([]byte(text), &NetParameter{})
	if err == nil || !strings.Contains(err.Error(), "line 3:") || !strings.Contains(err.Error(), "typo_field") {
		t.Errorf("error %v does not give line 3 and the field", err)
	}
}
