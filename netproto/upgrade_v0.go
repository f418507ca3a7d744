package netproto

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The upgrade of V0 nets (Caffe's UpgradeV0Net): `layers { layer { type:
// "conv" ... } }`, with padding layers folded into the layer they feed, to
// V1 layers, which upgradeV1Net then turns into current ones.

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
	u := &v0Upgrade{v0: v0, out: out, typ: typ}
	u.convAndInnerProduct()
	u.geometry()
	u.convPoolDropoutLRN()
	u.dataSource()
	u.transform()
	u.imagesAndWindows()
	u.concatAndOutput()
	if len(u.problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(u.problems, "; "))
	}
	return out, nil
}

// v0Upgrade is one V0 layer being converted: each field of the V0
// parameter goes to the V1 parameter its layer type has, in Caffe's order
// (UpgradeV0LayerParameter), or becomes a problem.
type v0Upgrade struct {
	v0       *caffepb.V0LayerParameter
	out      *caffepb.V1LayerParameter
	typ      string
	problems []string
}

// byType applies the conversion of field for the layer's type, if the
// field is set; a type with none is a problem.
func (u *v0Upgrade) byType(field string, set bool, conversions map[string]func()) {
	if !set {
		return
	}
	if convert, ok := conversions[u.typ]; ok {
		convert()
		return
	}
	u.problems = append(u.problems, fmt.Sprintf("layer %q: unknown parameter %s for layer type %q", u.v0.GetName(), field, u.typ))
}

// only is byType for a field of one layer type.
func (u *v0Upgrade) only(typ, field string, set bool, convert func()) {
	u.byType(field, set, map[string]func(){typ: convert})
}

// num_output, biasterm and the fillers of convolutions and inner products.
func (u *v0Upgrade) convAndInnerProduct() {
	v0 := u.v0
	u.byType("num_output", v0.NumOutput != nil, map[string]func(){
		"conv":         func() { ensure(&u.out.ConvolutionParam).NumOutput = v0.NumOutput },
		"innerproduct": func() { ensure(&u.out.InnerProductParam).NumOutput = v0.NumOutput },
	})
	u.byType("biasterm", v0.Biasterm != nil, map[string]func(){
		"conv":         func() { ensure(&u.out.ConvolutionParam).BiasTerm = v0.Biasterm },
		"innerproduct": func() { ensure(&u.out.InnerProductParam).BiasTerm = v0.Biasterm },
	})
	u.byType("weight_filler", v0.WeightFiller != nil, map[string]func(){
		"conv":         func() { ensure(&u.out.ConvolutionParam).WeightFiller = v0.WeightFiller },
		"innerproduct": func() { ensure(&u.out.InnerProductParam).WeightFiller = v0.WeightFiller },
	})
	u.byType("bias_filler", v0.BiasFiller != nil, map[string]func(){
		"conv":         func() { ensure(&u.out.ConvolutionParam).BiasFiller = v0.BiasFiller },
		"innerproduct": func() { ensure(&u.out.InnerProductParam).BiasFiller = v0.BiasFiller },
	})
}

// pad, kernelsize and stride of convolutions (repeated fields) and poolings.
func (u *v0Upgrade) geometry() {
	v0 := u.v0
	u.byType("pad", v0.Pad != nil, map[string]func(){
		"conv": func() { ensure(&u.out.ConvolutionParam).Pad = append(ensure(&u.out.ConvolutionParam).Pad, v0.GetPad()) },
		"pool": func() { ensure(&u.out.PoolingParam).Pad = v0.Pad },
	})
	u.byType("kernelsize", v0.Kernelsize != nil, map[string]func(){
		"conv": func() {
			ensure(&u.out.ConvolutionParam).KernelSize = append(ensure(&u.out.ConvolutionParam).KernelSize, v0.GetKernelsize())
		},
		"pool": func() { ensure(&u.out.PoolingParam).KernelSize = v0.Kernelsize },
	})
	u.byType("stride", v0.Stride != nil, map[string]func(){
		"conv": func() {
			ensure(&u.out.ConvolutionParam).Stride = append(ensure(&u.out.ConvolutionParam).Stride, v0.GetStride())
		},
		"pool": func() { ensure(&u.out.PoolingParam).Stride = v0.Stride },
	})
}

// group, pool, dropout_ratio and the LRN fields.
func (u *v0Upgrade) convPoolDropoutLRN() {
	v0 := u.v0
	u.only("conv", "group", v0.Group != nil, func() { ensure(&u.out.ConvolutionParam).Group = v0.Group })
	u.only("pool", "pool", v0.Pool != nil, func() {
		ensure(&u.out.PoolingParam).Pool = caffepb.PoolingParameter_PoolMethod(v0.GetPool()).Enum()
	})
	u.only("dropout", "dropout_ratio", v0.DropoutRatio != nil, func() {
		u.out.DropoutParam = &caffepb.DropoutParameter{DropoutRatio: v0.DropoutRatio}
	})
	u.only("lrn", "local_size", v0.LocalSize != nil, func() { ensure(&u.out.LrnParam).LocalSize = v0.LocalSize })
	u.only("lrn", "alpha", v0.Alpha != nil, func() { ensure(&u.out.LrnParam).Alpha = v0.Alpha })
	u.only("lrn", "beta", v0.Beta != nil, func() { ensure(&u.out.LrnParam).Beta = v0.Beta })
	u.only("lrn", "k", v0.K != nil, func() { ensure(&u.out.LrnParam).K = v0.K })
}

// source, batchsize and rand_skip of the data layers (source of an
// infogain loss too).
func (u *v0Upgrade) dataSource() {
	v0, out := u.v0, u.out
	u.byType("source", v0.Source != nil, map[string]func(){
		"data":          func() { ensure(&out.DataParam).Source = v0.Source },
		"hdf5_data":     func() { ensure(&out.Hdf5DataParam).Source = v0.Source },
		"images":        func() { ensure(&out.ImageDataParam).Source = v0.Source },
		"window_data":   func() { ensure(&out.WindowDataParam).Source = v0.Source },
		"infogain_loss": func() { out.InfogainLossParam = &caffepb.InfogainLossParameter{Source: v0.Source} },
	})
	u.byType("batchsize", v0.Batchsize != nil, map[string]func(){
		"data":        func() { ensure(&out.DataParam).BatchSize = v0.Batchsize },
		"hdf5_data":   func() { ensure(&out.Hdf5DataParam).BatchSize = v0.Batchsize },
		"images":      func() { ensure(&out.ImageDataParam).BatchSize = v0.Batchsize },
		"window_data": func() { ensure(&out.WindowDataParam).BatchSize = v0.Batchsize },
	})
	u.byType("rand_skip", v0.RandSkip != nil, map[string]func(){
		"data":   func() { ensure(&out.DataParam).RandSkip = v0.RandSkip },
		"images": func() { ensure(&out.ImageDataParam).RandSkip = v0.RandSkip },
	})
}

// scale, meanfile, cropsize and mirror, for any layer type, to
// transform_param.
func (u *v0Upgrade) transform() {
	v0 := u.v0
	tp := func() *caffepb.TransformationParameter { return ensure(&u.out.TransformParam) }
	if v0.Scale != nil {
		tp().Scale = v0.Scale
	}
	if v0.Meanfile != nil {
		tp().MeanFile = v0.Meanfile
	}
	if v0.Cropsize != nil {
		tp().CropSize = v0.Cropsize
	}
	if v0.Mirror != nil {
		tp().Mirror = v0.Mirror
	}
}

// The image data layer's shuffle and new size, the window data layer's
// detection fields.
func (u *v0Upgrade) imagesAndWindows() {
	v0, out := u.v0, u.out
	u.only("images", "shuffle", v0.ShuffleImages != nil, func() { ensure(&out.ImageDataParam).Shuffle = v0.ShuffleImages })
	u.only("images", "new_height", v0.NewHeight != nil, func() { ensure(&out.ImageDataParam).NewHeight = proto.Uint32(uint32(v0.GetNewHeight())) })
	u.only("images", "new_width", v0.NewWidth != nil, func() { ensure(&out.ImageDataParam).NewWidth = proto.Uint32(uint32(v0.GetNewWidth())) })
	u.only("window_data", "det_fg_threshold", v0.DetFgThreshold != nil, func() { ensure(&out.WindowDataParam).FgThreshold = v0.DetFgThreshold })
	u.only("window_data", "det_bg_threshold", v0.DetBgThreshold != nil, func() { ensure(&out.WindowDataParam).BgThreshold = v0.DetBgThreshold })
	u.only("window_data", "det_fg_fraction", v0.DetFgFraction != nil, func() { ensure(&out.WindowDataParam).FgFraction = v0.DetFgFraction })
	u.only("window_data", "det_context_pad", v0.DetContextPad != nil, func() { ensure(&out.WindowDataParam).ContextPad = v0.DetContextPad })
	u.only("window_data", "det_crop_mode", v0.DetCropMode != nil, func() { ensure(&out.WindowDataParam).CropMode = v0.DetCropMode })
}

// concat_dim and hdf5_output_param.
func (u *v0Upgrade) concatAndOutput() {
	v0 := u.v0
	u.only("concat", "concat_dim", v0.ConcatDim != nil, func() {
		u.out.ConcatParam = &caffepb.ConcatParameter{ConcatDim: v0.ConcatDim}
	})
	u.only("hdf5_output", "hdf5_output_param", v0.Hdf5OutputParam != nil, func() { u.out.Hdf5OutputParam = v0.Hdf5OutputParam })
}

// ensure returns *field, set to a new message first if it is nil: the V1
// parameter a V0 field goes to, made when the first such field is.
func ensure[M any](field **M) *M {
	if *field == nil {
		*field = new(M)
	}
	return *field
}
