package netproto

import (
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// ReadNetParamsFromTextFile reads a net prototxt and upgrades it from older
// Caffe formats as needed (see Upgrade), logging to log (nil:
// slog.Default()).
func ReadNetParamsFromTextFile(path string, log *slog.Logger) (*caffepb.NetParameter, error) {
	return readAndUpgrade(path, log, protoio.ReadProtoFromTextFile)
}

// ReadNetParamsFromTextFileWith is ReadNetParamsFromTextFile reading the
// text as opts says (skipping unknown fields, for a fork's files).
func ReadNetParamsFromTextFileWith(path string, opts protoio.TextOptions, log *slog.Logger) (*caffepb.NetParameter, error) {
	if opts.Logger == nil {
		opts.Logger = log
	}
	return readAndUpgrade(path, log, opts.ReadFile)
}

// ReadNetParamsFromBinaryFile reads a binary NetParameter (a .caffemodel)
// and upgrades it as needed, logging to log (nil: slog.Default()).
func ReadNetParamsFromBinaryFile(path string, log *slog.Logger) (*caffepb.NetParameter, error) {
	return readAndUpgrade(path, log, protoio.ReadProtoFromBinaryFile)
}

func readAndUpgrade(path string, log *slog.Logger, read func(string, proto.Message) error) (*caffepb.NetParameter, error) {
	p := &caffepb.NetParameter{}
	if err := read(path, p); err != nil {
		return nil, err
	}
	if err := Upgrade(p, path, log); err != nil {
		return nil, err
	}
	return p, nil
}

// Upgrade converts a NetParameter written for an older Caffe to the current
// format in place, as Caffe does on load: V0 layers (`layers { layer {
// type: "conv" ... } }`, padding layers included) to V1, V1 layers
// (`layers { type: CONVOLUTION }`) to current layers, data-transformation
// fields of data layers to transform_param, `input:`/`input_dim:`/
// `input_shape:` to an Input layer, and old BatchNorm parameter specs to
// lr_mult 0. source names the file for the log and for errors; log
// receives a line for each upgrade (nil: slog.Default()).
func Upgrade(p *caffepb.NetParameter, source string, log *slog.Logger) error {
	if needsV0Upgrade(p) {
		logf.Infof(log, "Attempting to upgrade input file specified using deprecated V0LayerParameter: %s", source)
		if err := upgradeV0Net(p); err != nil {
			return fmt.Errorf("%s: upgrading V0 layers: %w", source, err)
		}
	}
	if needsDataUpgrade(p) {
		logf.Infof(log, "Attempting to upgrade input file specified using deprecated transformation parameters: %s", source)
		upgradeDataTransformation(p)
	}
	if len(p.Layers) > 0 {
		logf.Infof(log, "Attempting to upgrade input file specified using deprecated V1LayerParameter: %s", source)
		if err := upgradeV1Net(p); err != nil {
			return fmt.Errorf("%s: upgrading V1 layers: %w", source, err)
		}
	}
	if len(p.Input) > 0 || len(p.InputShape) > 0 || len(p.InputDim) > 0 {
		logf.Infof(log, "Attempting to upgrade input file specified using deprecated input fields: %s", source)
		if err := upgradeInput(p); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
	}
	upgradeBatchNorm(p)
	return nil
}

// moveTransform moves scale, mean_file, crop_size and mirror from a V1 data
// layer's parameter to its transform_param. It reports whether any was set.
func moveTransform(l *caffepb.V1LayerParameter, m proto.Message, apply bool) bool {
	if m == nil || !m.ProtoReflect().IsValid() {
		return false
	}
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	tp := (&caffepb.TransformationParameter{}).ProtoReflect()
	moved := false
	for _, name := range []protoreflect.Name{"scale", "mean_file", "crop_size", "mirror"} {
		fd := fields.ByName(name)
		if fd == nil || !r.Has(fd) {
			continue
		}
		moved = true
		if apply {
			tp.Set(tp.Descriptor().Fields().ByName(name), r.Get(fd))
			r.Clear(fd)
		}
	}
	if moved && apply {
		if l.TransformParam == nil {
			l.TransformParam = &caffepb.TransformationParameter{}
		}
		proto.Merge(l.TransformParam, tp.Interface())
	}
	return moved
}

// dataLayerParam returns a V1 data layer's own parameter (nil for other
// types), made where it is missing if create is set.
func dataLayerParam(l *caffepb.V1LayerParameter, create bool) proto.Message {
	switch l.GetType() {
	case caffepb.V1LayerParameter_DATA:
		if create {
			ensure(&l.DataParam)
		}
		return l.DataParam
	case caffepb.V1LayerParameter_IMAGE_DATA:
		if create {
			ensure(&l.ImageDataParam)
		}
		return l.ImageDataParam
	case caffepb.V1LayerParameter_WINDOW_DATA:
		if create {
			ensure(&l.WindowDataParam)
		}
		return l.WindowDataParam
	}
	return nil
}

func needsDataUpgrade(p *caffepb.NetParameter) bool {
	for _, l := range p.Layers {
		if m := dataLayerParam(l, false); m != nil && moveTransform(l, m, false) {
			return true
		}
	}
	return false
}

// upgradeDataTransformation moves every V1 data layer's transformation
// fields. As Caffe's UpgradeNetDataTransformation, it gives each such
// layer its parameter and a transform_param, empty where it moved nothing
// (the upgraded text then says "transform_param {}" where Caffe's does).
func upgradeDataTransformation(p *caffepb.NetParameter) {
	for _, l := range p.Layers {
		if m := dataLayerParam(l, true); m != nil {
			ensure(&l.TransformParam)
			moveTransform(l, m, true)
		}
	}
}

// v1TypeNames maps V1 layer types to the current type strings.
var v1TypeNames = map[caffepb.V1LayerParameter_LayerType]string{
	caffepb.V1LayerParameter_ABSVAL: "AbsVal", caffepb.V1LayerParameter_ACCURACY: "Accuracy",
	caffepb.V1LayerParameter_ARGMAX: "ArgMax", caffepb.V1LayerParameter_BNLL: "BNLL",
	caffepb.V1LayerParameter_CONCAT: "Concat", caffepb.V1LayerParameter_CONTRASTIVE_LOSS: "ContrastiveLoss",
	caffepb.V1LayerParameter_CONVOLUTION: "Convolution", caffepb.V1LayerParameter_DECONVOLUTION: "Deconvolution",
	caffepb.V1LayerParameter_DATA: "Data", caffepb.V1LayerParameter_DROPOUT: "Dropout",
	caffepb.V1LayerParameter_DUMMY_DATA: "DummyData", caffepb.V1LayerParameter_EUCLIDEAN_LOSS: "EuclideanLoss",
	caffepb.V1LayerParameter_ELTWISE: "Eltwise", caffepb.V1LayerParameter_EXP: "Exp",
	caffepb.V1LayerParameter_FLATTEN: "Flatten", caffepb.V1LayerParameter_HDF5_DATA: "HDF5Data",
	caffepb.V1LayerParameter_HDF5_OUTPUT: "HDF5Output", caffepb.V1LayerParameter_HINGE_LOSS: "HingeLoss",
	caffepb.V1LayerParameter_IM2COL: "Im2col", caffepb.V1LayerParameter_IMAGE_DATA: "ImageData",
	caffepb.V1LayerParameter_INFOGAIN_LOSS: "InfogainLoss", caffepb.V1LayerParameter_INNER_PRODUCT: "InnerProduct",
	caffepb.V1LayerParameter_LRN: "LRN", caffepb.V1LayerParameter_MEMORY_DATA: "MemoryData",
	caffepb.V1LayerParameter_MULTINOMIAL_LOGISTIC_LOSS: "MultinomialLogisticLoss", caffepb.V1LayerParameter_MVN: "MVN",
	caffepb.V1LayerParameter_POOLING: "Pooling", caffepb.V1LayerParameter_POWER: "Power",
	caffepb.V1LayerParameter_RELU: "ReLU", caffepb.V1LayerParameter_SIGMOID: "Sigmoid",
	caffepb.V1LayerParameter_SIGMOID_CROSS_ENTROPY_LOSS: "SigmoidCrossEntropyLoss", caffepb.V1LayerParameter_SILENCE: "Silence",
	caffepb.V1LayerParameter_SOFTMAX: "Softmax", caffepb.V1LayerParameter_SOFTMAX_LOSS: "SoftmaxWithLoss",
	caffepb.V1LayerParameter_SPLIT: "Split", caffepb.V1LayerParameter_SLICE: "Slice",
	caffepb.V1LayerParameter_TANH: "TanH", caffepb.V1LayerParameter_WINDOW_DATA: "WindowData",
	caffepb.V1LayerParameter_THRESHOLD: "Threshold",
}

// upgradeV1Net replaces the V1 `layers` with current `layer`s.
func upgradeV1Net(p *caffepb.NetParameter) error {
	if len(p.Layer) > 0 {
		return fmt.Errorf("the net has both V1 'layers' and current 'layer' fields; use one or the other")
	}
	for i, v1 := range p.Layers {
		l, err := upgradeV1Layer(v1)
		if err != nil {
			return fmt.Errorf("layer %d (%q): %w", i, v1.GetName(), err)
		}
		p.Layer = append(p.Layer, l)
	}
	p.Layers = nil
	return nil
}

// upgradeV1Layer converts one V1 layer. Every *_param message (and
// transform_param, loss_param) is copied to the field of the same name:
// the V1 and current messages share those types.
func upgradeV1Layer(v1 *caffepb.V1LayerParameter) (*caffepb.LayerParameter, error) {
	if v1.Layer != nil {
		return nil, fmt.Errorf("still holds a V0 layer")
	}
	l := &caffepb.LayerParameter{Name: v1.Name, Bottom: v1.Bottom, Top: v1.Top,
		Include: v1.Include, Exclude: v1.Exclude, Blobs: v1.Blobs, LossWeight: v1.LossWeight}
	if v1.Type != nil {
		name, ok := v1TypeNames[v1.GetType()]
		if !ok {
			return nil, fmt.Errorf("unknown V1 layer type %v", v1.GetType())
		}
		l.Type = proto.String(name)
	}
	spec := func(i int) *caffepb.ParamSpec {
		for len(l.Param) <= i {
			l.Param = append(l.Param, &caffepb.ParamSpec{})
		}
		return l.Param[i]
	}
	for i, name := range v1.Param {
		spec(i).Name = proto.String(name)
	}
	for i, mode := range v1.BlobShareMode {
		spec(i).ShareMode = caffepb.ParamSpec_DimCheckMode(mode).Enum()
	}
	for i, lr := range v1.BlobsLr {
		spec(i).LrMult = proto.Float32(lr)
	}
	for i, decay := range v1.WeightDecay {
		spec(i).DecayMult = proto.Float32(decay)
	}
	src, dst := v1.ProtoReflect(), l.ProtoReflect()
	fields := src.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := fd.Name()
		if fd.Kind() != protoreflect.MessageKind || !strings.HasSuffix(string(name), "_param") || !src.Has(fd) {
			continue
		}
		target := dst.Descriptor().Fields().ByName(name)
		if target == nil {
			return nil, fmt.Errorf("V1 field %s has no current counterpart", name)
		}
		dst.Set(target, protoreflect.ValueOfMessage(proto.Clone(src.Get(fd).Message().Interface()).ProtoReflect()))
	}
	return l, nil
}

// upgradeInput turns the net-level input fields into an Input layer at the
// front of the net. A net with input names but no shapes (an old
// caffemodel) just loses the fields.
func upgradeInput(p *caffepb.NetParameter) error {
	hasShape, hasDim := len(p.InputShape) > 0, len(p.InputDim) > 0
	if hasShape && hasDim {
		return fmt.Errorf("must specify either input_shape OR deprecated input_dim, not both")
	}
	if hasShape || hasDim {
		if hasShape && len(p.InputShape) != len(p.Input) {
			return fmt.Errorf("exactly one input_shape must be specified per input: %d inputs, %d shapes", len(p.Input), len(p.InputShape))
		}
		if hasDim && len(p.InputDim) != 4*len(p.Input) {
			return fmt.Errorf("incorrect input blob dimension specifications: %d input_dim values for %d inputs, want 4 each", len(p.InputDim), len(p.Input))
		}
		in := &caffepb.LayerParameter{Name: proto.String("input"), Type: proto.String("Input"), InputParam: &caffepb.InputParameter{}}
		for i, name := range p.Input {
			in.Top = append(in.Top, name)
			if hasShape {
				in.InputParam.Shape = append(in.InputParam.Shape, p.InputShape[i])
				continue
			}
			dims := make([]int64, 4)
			for j := range dims {
				dims[j] = int64(p.InputDim[4*i+j])
			}
			in.InputParam.Shape = append(in.InputParam.Shape, &caffepb.BlobShape{Dim: dims})
		}
		p.Layer = append([]*caffepb.LayerParameter{in}, p.Layer...)
	}
	p.Input, p.InputShape, p.InputDim = nil, nil, nil
	return nil
}

// upgradeBatchNorm sets lr_mult and decay_mult to 0 on BatchNorm layers that
// declare the three parameter specs the old definition required.
func upgradeBatchNorm(p *caffepb.NetParameter) {
	for _, l := range p.Layer {
		if l.GetType() == "BatchNorm" && len(l.Param) == 3 {
			for _, s := range l.Param {
				s.LrMult, s.DecayMult = proto.Float32(0), proto.Float32(0)
			}
		}
	}
}
