package net

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
	p := &caffepb.NetParameter{}
	if err := protoio.ReadProtoFromTextFile(path, p); err != nil {
		return nil, err
	}
	if err := Upgrade(p, path, log); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadNetParamsFromBinaryFile reads a binary NetParameter (a .caffemodel)
// and upgrades it as needed, logging to log (nil: slog.Default()).
func ReadNetParamsFromBinaryFile(path string, log *slog.Logger) (*caffepb.NetParameter, error) {
	p := &caffepb.NetParameter{}
	if err := protoio.ReadProtoFromBinaryFile(path, p); err != nil {
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

func needsV0Upgrade(p *caffepb.NetParameter) bool {
	for _, l := range p.Layers {
		if l.Layer != nil {
			return true
		}
	}
	return false
}

// upgradeV0Net turns V0 layers into V1 layers, first folding "padding"
// layers into the convolution or pooling they feed.
func upgradeV0Net(p *caffepb.NetParameter) error {
	layers, err := foldV0Padding(p)
	if err != nil {
		return err
	}
	p.Layers = p.Layers[:0]
	var problems []string
	for _, l := range layers {
		v1, err := upgradeV0Layer(l)
		if err != nil {
			problems = append(problems, err.Error())
		}
		p.Layers = append(p.Layers, v1)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// foldV0Padding drops V0 "padding" layers, moving their pad into the
// convolution or pooling layer that reads their output.
func foldV0Padding(p *caffepb.NetParameter) ([]*caffepb.V1LayerParameter, error) {
	producer := map[string]*caffepb.V1LayerParameter{}
	for _, in := range p.Input {
		producer[in] = nil
	}
	var out []*caffepb.V1LayerParameter
	for _, l := range p.Layers {
		v0 := l.GetLayer()
		if v0.GetType() != "padding" {
			out = append(out, l)
		}
		for j, bottom := range l.Bottom {
			src, ok := producer[bottom]
			if !ok {
				return nil, fmt.Errorf("unknown blob input %q to layer %q", bottom, v0.GetName())
			}
			if src == nil || src.GetLayer().GetType() != "padding" {
				continue
			}
			if t := v0.GetType(); t != "conv" && t != "pool" {
				return nil, fmt.Errorf("padding layer input to non-convolutional / non-pooling layer %q of type %q", v0.GetName(), t)
			}
			if len(l.Bottom) != 1 || len(src.Bottom) != 1 || len(src.Top) != 1 {
				return nil, fmt.Errorf("padding layer %q and layer %q must each take a single blob", src.GetLayer().GetName(), v0.GetName())
			}
			v0.Pad = proto.Uint32(src.GetLayer().GetPad())
			l.Bottom[j] = src.Bottom[0]
		}
		for _, top := range l.Top {
			producer[top] = l
		}
	}
	return out, nil
}

// v0Types maps V0 type strings to V1 layer types.
var v0Types = map[string]caffepb.V1LayerParameter_LayerType{
	"accuracy": caffepb.V1LayerParameter_ACCURACY, "bnll": caffepb.V1LayerParameter_BNLL,
	"concat": caffepb.V1LayerParameter_CONCAT, "conv": caffepb.V1LayerParameter_CONVOLUTION,
	"data": caffepb.V1LayerParameter_DATA, "dropout": caffepb.V1LayerParameter_DROPOUT,
	"euclidean_loss": caffepb.V1LayerParameter_EUCLIDEAN_LOSS, "flatten": caffepb.V1LayerParameter_FLATTEN,
	"hdf5_data": caffepb.V1LayerParameter_HDF5_DATA, "hdf5_output": caffepb.V1LayerParameter_HDF5_OUTPUT,
	"im2col": caffepb.V1LayerParameter_IM2COL, "images": caffepb.V1LayerParameter_IMAGE_DATA,
	"infogain_loss": caffepb.V1LayerParameter_INFOGAIN_LOSS, "innerproduct": caffepb.V1LayerParameter_INNER_PRODUCT,
	"lrn": caffepb.V1LayerParameter_LRN, "multinomial_logistic_loss": caffepb.V1LayerParameter_MULTINOMIAL_LOGISTIC_LOSS,
	"pool": caffepb.V1LayerParameter_POOLING, "relu": caffepb.V1LayerParameter_RELU,
	"sigmoid": caffepb.V1LayerParameter_SIGMOID, "softmax": caffepb.V1LayerParameter_SOFTMAX,
	"softmax_loss": caffepb.V1LayerParameter_SOFTMAX_LOSS, "split": caffepb.V1LayerParameter_SPLIT,
	"tanh": caffepb.V1LayerParameter_TANH, "window_data": caffepb.V1LayerParameter_WINDOW_DATA,
}

// upgradeV0Layer converts one V0 layer; a field that does not apply to the
// layer's type is reported (the rest is still converted).
func upgradeV0Layer(in *caffepb.V1LayerParameter) (*caffepb.V1LayerParameter, error) {
	out := &caffepb.V1LayerParameter{Bottom: in.Bottom, Top: in.Top}
	v0 := in.GetLayer()
	if v0 == nil {
		return out, nil
	}
	out.Name = v0.Name
	typ := v0.GetType()
	if v0.Type != nil {
		t, ok := v0Types[typ]
		if !ok {
			return out, fmt.Errorf("layer %q: unknown V0 layer type %q", v0.GetName(), typ)
		}
		out.Type = t.Enum()
	}
	out.Blobs, out.BlobsLr, out.WeightDecay = v0.Blobs, v0.BlobsLr, v0.WeightDecay
	var problems []string
	bad := func(field string) {
		problems = append(problems, fmt.Sprintf("layer %q: unknown parameter %s for layer type %q", v0.GetName(), field, typ))
	}
	conv := func() *caffepb.ConvolutionParameter {
		if out.ConvolutionParam == nil {
			out.ConvolutionParam = &caffepb.ConvolutionParameter{}
		}
		return out.ConvolutionParam
	}
	ip := func() *caffepb.InnerProductParameter {
		if out.InnerProductParam == nil {
			out.InnerProductParam = &caffepb.InnerProductParameter{}
		}
		return out.InnerProductParam
	}
	pool := func() *caffepb.PoolingParameter {
		if out.PoolingParam == nil {
			out.PoolingParam = &caffepb.PoolingParameter{}
		}
		return out.PoolingParam
	}
	lrn := func() *caffepb.LRNParameter {
		if out.LrnParam == nil {
			out.LrnParam = &caffepb.LRNParameter{}
		}
		return out.LrnParam
	}
	transform := func() *caffepb.TransformationParameter {
		if out.TransformParam == nil {
			out.TransformParam = &caffepb.TransformationParameter{}
		}
		return out.TransformParam
	}
	if v0.NumOutput != nil {
		switch typ {
		case "conv":
			conv().NumOutput = v0.NumOutput
		case "innerproduct":
			ip().NumOutput = v0.NumOutput
		default:
			bad("num_output")
		}
	}
	if v0.Biasterm != nil {
		switch typ {
		case "conv":
			conv().BiasTerm = v0.Biasterm
		case "innerproduct":
			ip().BiasTerm = v0.Biasterm
		default:
			bad("biasterm")
		}
	}
	if v0.WeightFiller != nil {
		switch typ {
		case "conv":
			conv().WeightFiller = v0.WeightFiller
		case "innerproduct":
			ip().WeightFiller = v0.WeightFiller
		default:
			bad("weight_filler")
		}
	}
	if v0.BiasFiller != nil {
		switch typ {
		case "conv":
			conv().BiasFiller = v0.BiasFiller
		case "innerproduct":
			ip().BiasFiller = v0.BiasFiller
		default:
			bad("bias_filler")
		}
	}
	for _, f := range []struct {
		name string
		v    *uint32
	}{
		{"pad", v0.Pad}, {"kernelsize", v0.Kernelsize}, {"stride", v0.Stride},
	} {
		if f.v == nil {
			continue
		}
		switch typ {
		case "conv":
			c := conv()
			switch f.name {
			case "pad":
				c.Pad = append(c.Pad, *f.v)
			case "kernelsize":
				c.KernelSize = append(c.KernelSize, *f.v)
			case "stride":
				c.Stride = append(c.Stride, *f.v)
			}
		case "pool":
			p := pool()
			switch f.name {
			case "pad":
				p.Pad = proto.Uint32(*f.v)
			case "kernelsize":
				p.KernelSize = proto.Uint32(*f.v)
			case "stride":
				p.Stride = proto.Uint32(*f.v)
			}
		default:
			bad(f.name)
		}
	}
	if v0.Group != nil {
		if typ == "conv" {
			conv().Group = v0.Group
		} else {
			bad("group")
		}
	}
	if v0.Pool != nil {
		if typ == "pool" {
			pool().Pool = caffepb.PoolingParameter_PoolMethod(v0.GetPool()).Enum()
		} else {
			bad("pool")
		}
	}
	if v0.DropoutRatio != nil {
		if typ == "dropout" {
			out.DropoutParam = &caffepb.DropoutParameter{DropoutRatio: v0.DropoutRatio}
		} else {
			bad("dropout_ratio")
		}
	}
	for _, f := range []struct {
		name string
		set  bool
		do   func()
	}{
		{"local_size", v0.LocalSize != nil, func() { lrn().LocalSize = v0.LocalSize }},
		{"alpha", v0.Alpha != nil, func() { lrn().Alpha = v0.Alpha }},
		{"beta", v0.Beta != nil, func() { lrn().Beta = v0.Beta }},
		{"k", v0.K != nil, func() { lrn().K = v0.K }},
	} {
		if f.set {
			if typ == "lrn" {
				f.do()
			} else {
				bad(f.name)
			}
		}
	}
	if v0.Source != nil {
		switch typ {
		case "data":
			dataParam(out).Source = v0.Source
		case "hdf5_data":
			hdf5Param(out).Source = v0.Source
		case "images":
			imageParam(out).Source = v0.Source
		case "window_data":
			windowParam(out).Source = v0.Source
		case "infogain_loss":
			out.InfogainLossParam = &caffepb.InfogainLossParameter{Source: v0.Source}
		default:
			bad("source")
		}
	}
	if v0.Scale != nil {
		transform().Scale = v0.Scale
	}
	if v0.Meanfile != nil {
		transform().MeanFile = v0.Meanfile
	}
	if v0.Cropsize != nil {
		transform().CropSize = v0.Cropsize
	}
	if v0.Mirror != nil {
		transform().Mirror = v0.Mirror
	}
	if v0.Batchsize != nil {
		switch typ {
		case "data":
			dataParam(out).BatchSize = v0.Batchsize
		case "hdf5_data":
			hdf5Param(out).BatchSize = v0.Batchsize
		case "images":
			imageParam(out).BatchSize = v0.Batchsize
		case "window_data":
			windowParam(out).BatchSize = v0.Batchsize
		default:
			bad("batchsize")
		}
	}
	if v0.RandSkip != nil {
		switch typ {
		case "data":
			dataParam(out).RandSkip = v0.RandSkip
		case "images":
			imageParam(out).RandSkip = v0.RandSkip
		default:
			bad("rand_skip")
		}
	}
	imageOnly := []struct {
		name string
		set  bool
		do   func()
	}{
		{"shuffle", v0.ShuffleImages != nil, func() { imageParam(out).Shuffle = v0.ShuffleImages }},
		{"new_height", v0.NewHeight != nil, func() { imageParam(out).NewHeight = proto.Uint32(uint32(v0.GetNewHeight())) }},
		{"new_width", v0.NewWidth != nil, func() { imageParam(out).NewWidth = proto.Uint32(uint32(v0.GetNewWidth())) }},
	}
	for _, f := range imageOnly {
		if f.set {
			if typ == "images" {
				f.do()
			} else {
				bad(f.name)
			}
		}
	}
	if v0.ConcatDim != nil {
		if typ == "concat" {
			out.ConcatParam = &caffepb.ConcatParameter{ConcatDim: v0.ConcatDim}
		} else {
			bad("concat_dim")
		}
	}
	windowOnly := []struct {
		name string
		set  bool
		do   func()
	}{
		{"det_fg_threshold", v0.DetFgThreshold != nil, func() { windowParam(out).FgThreshold = v0.DetFgThreshold }},
		{"det_bg_threshold", v0.DetBgThreshold != nil, func() { windowParam(out).BgThreshold = v0.DetBgThreshold }},
		{"det_fg_fraction", v0.DetFgFraction != nil, func() { windowParam(out).FgFraction = v0.DetFgFraction }},
		{"det_context_pad", v0.DetContextPad != nil, func() { windowParam(out).ContextPad = v0.DetContextPad }},
		{"det_crop_mode", v0.DetCropMode != nil, func() { windowParam(out).CropMode = v0.DetCropMode }},
	}
	for _, f := range windowOnly {
		if f.set {
			if typ == "window_data" {
				f.do()
			} else {
				bad(f.name)
			}
		}
	}
	if v0.Hdf5OutputParam != nil {
		if typ == "hdf5_output" {
			out.Hdf5OutputParam = v0.Hdf5OutputParam
		} else {
			bad("hdf5_output_param")
		}
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

func dataParam(l *caffepb.V1LayerParameter) *caffepb.DataParameter {
	if l.DataParam == nil {
		l.DataParam = &caffepb.DataParameter{}
	}
	return l.DataParam
}

func hdf5Param(l *caffepb.V1LayerParameter) *caffepb.HDF5DataParameter {
	if l.Hdf5DataParam == nil {
		l.Hdf5DataParam = &caffepb.HDF5DataParameter{}
	}
	return l.Hdf5DataParam
}

func imageParam(l *caffepb.V1LayerParameter) *caffepb.ImageDataParameter {
	if l.ImageDataParam == nil {
		l.ImageDataParam = &caffepb.ImageDataParameter{}
	}
	return l.ImageDataParam
}

func windowParam(l *caffepb.V1LayerParameter) *caffepb.WindowDataParameter {
	if l.WindowDataParam == nil {
		l.WindowDataParam = &caffepb.WindowDataParameter{}
	}
	return l.WindowDataParam
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

func dataLayerParam(l *caffepb.V1LayerParameter) proto.Message {
	switch l.GetType() {
	case caffepb.V1LayerParameter_DATA:
		return l.DataParam
	case caffepb.V1LayerParameter_IMAGE_DATA:
		return l.ImageDataParam
	case caffepb.V1LayerParameter_WINDOW_DATA:
		return l.WindowDataParam
	}
	return nil
}

func needsDataUpgrade(p *caffepb.NetParameter) bool {
	for _, l := range p.Layers {
		if m := dataLayerParam(l); m != nil && moveTransform(l, m, false) {
			return true
		}
	}
	return false
}

func upgradeDataTransformation(p *caffepb.NetParameter) {
	for _, l := range p.Layers {
		if m := dataLayerParam(l); m != nil {
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
