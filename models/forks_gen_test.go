package models_test

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/netspec"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Nets in the style of Caffe's forks, written by this generator from the
// papers' architectures and the layer layout of the forks' published
// models: SSD300 (VGG-16 reduced) and MobileNet-SSD for weiliu89's SSD,
// a Faster R-CNN VGG-16 test net for py-faster-rcnn, an SE-ResNet block for
// SENet's Caffe, a BN-Inception fragment for TSN's. models/forks_test.go
// builds and runs them.

// ssdHead is one source of SSD's predictions: its feature map and its
// prior boxes.
type ssdHead struct {
	src              netspec.Blob
	name             string
	minSize, maxSize float32
	ratios           []float32
	step             float32
}

// priors is how many boxes a head places per position: 1 (min size), 1
// (max size), and two per aspect ratio (flipped).
func (h ssdHead) priors() int { return 2 + 2*len(h.ratios) }

// reshape writes a Reshape layer to dims.
func (g gen) reshape(name string, b netspec.Blob, dims ...int64) netspec.Blob {
	return g.n.Layer(name, "Reshape", netspec.On(b), func(l *caffepb.LayerParameter) {
		l.ReshapeParam = &caffepb.ReshapeParameter{Shape: &caffepb.BlobShape{Dim: dims}}
	})
}

// dilatedConv writes a convolution with dilation (SSD's fc6).
func (g gen) dilatedConv(name string, bottom netspec.Blob, out, kernel, pad, dilation int) netspec.Blob {
	return g.n.Layer(name, "Convolution", netspec.On(bottom), func(l *caffepb.LayerParameter) {
		l.ConvolutionParam = &caffepb.ConvolutionParameter{NumOutput: u32(out), KernelSize: []uint32{uint32(kernel)},
			Pad: []uint32{uint32(pad)}, Dilation: []uint32{uint32(dilation)}, WeightFiller: netspec.Filler(xavier)}
	})
}

// convRelu writes a biased convolution and its in-place ReLU.
func (g gen) convRelu(name string, bottom netspec.Blob, out, kernel, stride, pad int) netspec.Blob {
	return g.relu(name+"_relu", g.conv(name, bottom, out, kernel, stride, pad, 1, true, xavier))
}

// ssdPredict writes SSD's prediction layers over the heads (ssdHeads),
// the softmax over the classes and DetectionOutput.
func (g gen) ssdPredict(data netspec.Blob, heads []ssdHead, classes int) {
	loc, conf, prior := g.ssdHeads(data, heads, classes)
	conf = g.reshape("mbox_conf_reshape", conf, 0, -1, int64(classes))
	conf = g.n.Layer("mbox_conf_softmax", "Softmax", netspec.On(conf), func(l *caffepb.LayerParameter) {
		l.SoftmaxParam = &caffepb.SoftmaxParameter{Axis: proto.Int32(2)}
	})
	conf = g.n.Layer("mbox_conf_flatten", "Flatten", netspec.On(conf), nil)
	g.n.Layer("detection_out", "DetectionOutput", netspec.On(loc, conf, prior), func(l *caffepb.LayerParameter) {
		l.DetectionOutputParam = &caffepb.DetectionOutputParameter{NumClasses: u32(classes), ShareLocation: proto.Bool(true),
			BackgroundLabelId: proto.Int32(0), NmsParam: &caffepb.NonMaximumSuppressionParameter{NmsThreshold: proto.Float32(0.45), TopK: proto.Int32(400)},
			CodeType: caffepb.PriorBoxParameter_CENTER_SIZE.Enum(), KeepTopK: proto.Int32(200), ConfidenceThreshold: proto.Float32(0.01)}
	})
}

// ssdLoss writes SSD's training head: the predictions and MultiBoxLoss
// against the AnnotatedData labels, with SSD's VOC settings.
func (g gen) ssdLoss(data, label netspec.Blob, heads []ssdHead, classes int) {
	loc, conf, prior := g.ssdHeads(data, heads, classes)
	g.n.Layer("mbox_loss", "MultiBoxLoss", netspec.On(loc, conf, prior, label), func(l *caffepb.LayerParameter) {
		l.PropagateDown = []bool{true, true, false, false}
		l.LossParam = &caffepb.LossParameter{Normalization: caffepb.LossParameter_VALID.Enum()}
		l.MultiboxLossParam = &caffepb.MultiBoxLossParameter{LocLossType: caffepb.MultiBoxLossParameter_SMOOTH_L1.Enum(),
			ConfLossType: caffepb.MultiBoxLossParameter_SOFTMAX.Enum(), LocWeight: proto.Float32(1), NumClasses: u32(classes),
			ShareLocation: proto.Bool(true), MatchType: caffepb.MultiBoxLossParameter_PER_PREDICTION.Enum(), OverlapThreshold: proto.Float32(0.5),
			UsePriorForMatching: proto.Bool(true), BackgroundLabelId: u32(0), UseDifficultGt: proto.Bool(true), NegPosRatio: proto.Float32(3),
			NegOverlap: proto.Float32(0.5), CodeType: caffepb.PriorBoxParameter_CENTER_SIZE.Enum(), IgnoreCrossBoundaryBbox: proto.Bool(false),
			MiningType: caffepb.MultiBoxLossParameter_MAX_NEGATIVE.Enum()}
	})
}

// ssdHeads writes, per head, a location and a confidence convolution, each
// permuted to N x H x W x C and flattened, and the head's PriorBox, and
// returns their concatenations.
func (g gen) ssdHeads(data netspec.Blob, heads []ssdHead, classes int) (loc, conf, prior netspec.Blob) {
	var locs, confs, priors []netspec.Blob
	for _, h := range heads {
		flat := func(suffix string, out int) netspec.Blob {
			x := g.conv(h.name+"_mbox_"+suffix, h.src, out, 3, 1, 1, 1, true, xavier)
			x = g.n.Layer(h.name+"_mbox_"+suffix+"_perm", "Permute", netspec.On(x), func(l *caffepb.LayerParameter) {
				l.PermuteParam = &caffepb.PermuteParameter{Order: []uint32{0, 2, 3, 1}}
			})
			return g.n.Layer(h.name+"_mbox_"+suffix+"_flat", "Flatten", netspec.On(x), nil)
		}
		locs = append(locs, flat("loc", 4*h.priors()))
		confs = append(confs, flat("conf", classes*h.priors()))
		priors = append(priors, g.n.Layer(h.name+"_mbox_priorbox", "PriorBox", netspec.On(h.src, data), func(l *caffepb.LayerParameter) {
			l.PriorBoxParam = &caffepb.PriorBoxParameter{MinSize: []float32{h.minSize}, MaxSize: []float32{h.maxSize},
				AspectRatio: h.ratios, Flip: proto.Bool(true), Clip: proto.Bool(false),
				Variance: []float32{0.1, 0.1, 0.2, 0.2}, Step: proto.Float32(h.step), Offset: proto.Float32(0.5)}
		}))
	}
	concat := func(name string, axis int32, parts []netspec.Blob) netspec.Blob {
		return g.n.Layer(name, "Concat", parts, func(l *caffepb.LayerParameter) {
			l.ConcatParam = &caffepb.ConcatParameter{Axis: proto.Int32(axis)}
		})
	}
	return concat("mbox_loc", 1, locs), concat("mbox_conf", 1, confs), concat("mbox_priorbox", 2, priors)
}

// vgg16 writes VGG-16's convolutions up to conv5_3 and returns conv4_3 and
// conv5_3; pool4 is 2x2, and pool5 is left to the caller.
func (g gen) vgg16(data netspec.Blob) (conv43, conv53 netspec.Blob) {
	x := data
	for b, blk := range []struct{ n, width int }{{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}} {
		if b > 0 {
			x = g.pool(fmt.Sprintf("pool%d", b), x, maxP, 2, 2, 0)
		}
		for i := range blk.n {
			x = g.convRelu(fmt.Sprintf("conv%d_%d", b+1, i+1), x, blk.width, 3, 1, 1)
		}
		if b == 3 {
			conv43 = x
		}
	}
	return conv43, x
}

// ssd300 writes SSD300 on VGG-16 reduced (Liu et al. 2016) for the 21
// VOC classes, as weiliu89's deploy.prototxt lays it out: pool5 3x3 stride
// 1, fc6 a dilated 3x3 convolution, fc7 1x1, four extra stages, six heads,
// conv4_3 L2-normalized with a learned scale starting at 20.
func ssd300() string {
	g := newGen("VGG_VOC0712_SSD_300x300_deploy")
	data := g.deployInput(1, 300)
	g.ssdPredict(data, g.ssd300Base(data), 21)
	return g.text("# SSD300 on VGG-16 reduced (Liu et al. 2016), VOC's 21 classes, in the layout of\n# weiliu89/caffe's deploy net. Written by models/forks_gen_test.go through netspec.\n")
}

// ssd300Train writes SSD300's training net as weiliu89's ssd_pascal.py
// does: AnnotatedData from a VOC0712 LMDB with SSD's augmentation (the
// photometric distortions, expansion up to 4x, its seven batch samplers,
// a warp to 300x300 with a random interpolation, mirror, BGR mean values)
// and MultiBoxLoss.
func ssd300Train() string {
	g := newGen("VGG_VOC0712_SSD_300x300_train")
	tops := g.n.Tops("data", "AnnotatedData", nil, []string{"data", "label"}, func(l *caffepb.LayerParameter) {
		l.Include = []*caffepb.NetStateRule{netspec.Phase(caffepb.Phase_TRAIN)}
		l.TransformParam = &caffepb.TransformationParameter{Mirror: proto.Bool(true), MeanValue: []float32{104, 117, 123},
			ResizeParam: &caffepb.ResizeParameter{Prob: proto.Float32(1), ResizeMode: caffepb.ResizeParameter_WARP.Enum(), Height: u32(300), Width: u32(300),
				InterpMode: []caffepb.ResizeParameter_InterpMode{caffepb.ResizeParameter_LINEAR, caffepb.ResizeParameter_AREA,
					caffepb.ResizeParameter_NEAREST, caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4}},
			EmitConstraint: &caffepb.EmitConstraint{EmitType: caffepb.EmitConstraint_CENTER.Enum()},
			DistortParam: &caffepb.DistortionParameter{BrightnessProb: proto.Float32(0.5), BrightnessDelta: proto.Float32(32),
				ContrastProb: proto.Float32(0.5), ContrastLower: proto.Float32(0.5), ContrastUpper: proto.Float32(1.5),
				HueProb: proto.Float32(0.5), HueDelta: proto.Float32(18), SaturationProb: proto.Float32(0.5),
				SaturationLower: proto.Float32(0.5), SaturationUpper: proto.Float32(1.5), RandomOrderProb: proto.Float32(0)},
			ExpandParam: &caffepb.ExpansionParameter{Prob: proto.Float32(0.5), MaxExpandRatio: proto.Float32(4)}}
		l.DataParam = &caffepb.DataParameter{Source: proto.String("examples/VOC0712/VOC0712_trainval_lmdb"), BatchSize: u32(32),
			Backend: caffepb.DataParameter_LMDB.Enum()}
		l.AnnotatedDataParam = &caffepb.AnnotatedDataParameter{LabelMapFile: proto.String("data/VOC0712/labelmap_voc.prototxt"),
			BatchSampler: ssdBatchSamplers()}
	})
	data := tops[0]
	g.ssdLoss(data, tops[1], g.ssd300Base(data), 21)
	return g.text("# SSD300 on VGG-16 reduced (Liu et al. 2016), VOC's 21 classes: the training net, in the layout\n# weiliu89/caffe's ssd_pascal.py writes. Written by models/forks_gen_test.go through netspec.\n")
}

// ssdBatchSamplers are SSD's seven samplers: the whole image, windows of
// at least 0.1 to 0.9 Jaccard overlap with an object, and any window.
func ssdBatchSamplers() []*caffepb.BatchSampler {
	out := []*caffepb.BatchSampler{{Sampler: &caffepb.Sampler{}, MaxSample: u32(1), MaxTrials: u32(1)}}
	window := func() *caffepb.Sampler {
		return &caffepb.Sampler{MinScale: proto.Float32(0.3), MaxScale: proto.Float32(1), MinAspectRatio: proto.Float32(0.5), MaxAspectRatio: proto.Float32(2)}
	}
	for _, o := range []float32{0.1, 0.3, 0.5, 0.7, 0.9} {
		out = append(out, &caffepb.BatchSampler{Sampler: window(), SampleConstraint: &caffepb.SampleConstraint{MinJaccardOverlap: proto.Float32(o)},
			MaxSample: u32(1), MaxTrials: u32(50)})
	}
	return append(out, &caffepb.BatchSampler{Sampler: window(), SampleConstraint: &caffepb.SampleConstraint{MaxJaccardOverlap: proto.Float32(1)},
		MaxSample: u32(1), MaxTrials: u32(50)})
}

// ssd300Base writes VGG-16 reduced with SSD's extra stages and returns
// its six heads: pool5 3x3 stride 1, fc6 a dilated 3x3 convolution, fc7
// 1x1, four extra stages, conv4_3 L2-normalized with a learned scale
// starting at 20.
func (g gen) ssd300Base(data netspec.Blob) []ssdHead {
	conv43, x := g.vgg16(data)
	x = g.pool("pool5", x, maxP, 3, 1, 1)
	x = g.relu("relu6", g.dilatedConv("fc6", x, 1024, 3, 6, 6))
	fc7 := g.convRelu("fc7", x, 1024, 1, 1, 0)
	norm := g.n.Layer("conv4_3_norm", "Normalize", netspec.On(conv43), func(l *caffepb.LayerParameter) {
		l.NormParam = &caffepb.NormalizeParameter{AcrossSpatial: proto.Bool(false), ChannelShared: proto.Bool(false),
			ScaleFiller: netspec.Filler("constant", func(f *caffepb.FillerParameter) { f.Value = proto.Float32(20) })}
	})
	extras := []netspec.Blob{}
	x = fc7
	for i, e := range []struct{ reduce, out, stride, pad int }{{256, 512, 2, 1}, {128, 256, 2, 1}, {128, 256, 1, 0}, {128, 256, 1, 0}} {
		x = g.convRelu(fmt.Sprintf("conv%d_1", i+6), x, e.reduce, 1, 1, 0)
		x = g.convRelu(fmt.Sprintf("conv%d_2", i+6), x, e.out, 3, e.stride, e.pad)
		extras = append(extras, x)
	}
	two, three := []float32{2}, []float32{2, 3}
	return []ssdHead{
		{norm, "conv4_3_norm", 30, 60, two, 8}, {fc7, "fc7", 60, 111, three, 16},
		{extras[0], "conv6_2", 111, 162, three, 32}, {extras[1], "conv7_2", 162, 213, three, 64},
		{extras[2], "conv8_2", 213, 264, two, 100}, {extras[3], "conv9_2", 264, 315, two, 300},
	}
}

// mobilenetSSD writes MobileNet-SSD in the style of the Caffe port people
// use (chuanqi305/MobileNet-SSD): MobileNet v1 with ConvolutionDepthwise
// layers, BatchNorm + Scale after each convolution, four extra stages and
// heads on conv11, conv13 and the extras, at 300x300.
func mobilenetSSD() string {
	g := newGen("MobileNet-SSD")
	data := g.deployInput(1, 300)
	unit := func(name string, bottom netspec.Blob, out, kernel, stride int, depthwise bool) netspec.Blob {
		var x netspec.Blob
		if depthwise {
			x = g.n.Layer(name, "ConvolutionDepthwise", netspec.On(bottom), func(l *caffepb.LayerParameter) {
				l.ConvolutionParam = &caffepb.ConvolutionParameter{NumOutput: u32(out), KernelSize: []uint32{uint32(kernel)},
					Stride: []uint32{uint32(stride)}, Pad: []uint32{uint32(kernel / 2)}, BiasTerm: proto.Bool(false), WeightFiller: netspec.Filler(msra)}
			})
		} else {
			x = g.conv(name, bottom, out, kernel, stride, kernel/2, 1, false, msra)
		}
		g.bnScale(name+"/bn", name+"/scale", x)
		return g.relu(name+"/relu", x)
	}
	x, ch := unit("conv0", data, 32, 3, 2, false), 32
	var conv11 netspec.Blob
	for i, blk := range []struct{ out, stride int }{{64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2},
		{512, 1}, {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}} {
		dw := unit(fmt.Sprintf("conv%d/dw", i+1), x, ch, 3, blk.stride, true)
		x, ch = unit(fmt.Sprintf("conv%d", i+1), dw, blk.out, 1, 1, false), blk.out
		if i+1 == 11 {
			conv11 = x
		}
	}
	conv13 := x
	var extras []netspec.Blob
	for i, e := range []struct{ reduce, out int }{{256, 512}, {128, 256}, {128, 256}, {64, 128}} {
		x = unit(fmt.Sprintf("conv%d_1", i+14), x, e.reduce, 1, 1, false)
		x = unit(fmt.Sprintf("conv%d_2", i+14), x, e.out, 3, 2, false)
		extras = append(extras, x)
	}
	three := []float32{2, 3}
	g.ssdPredict(data, []ssdHead{
		{conv11, "conv11", 60, 105, []float32{2}, 16}, {conv13, "conv13", 105, 150, three, 32},
		{extras[0], "conv14_2", 150, 195, three, 64}, {extras[1], "conv15_2", 195, 240, three, 100},
		{extras[2], "conv16_2", 240, 285, three, 150}, {extras[3], "conv17_2", 285, 300, three, 300},
	}, 21)
	return g.text("# MobileNet-SSD for 300x300 images and VOC's 21 classes, in the style of the Caffe port\n# (ConvolutionDepthwise, BatchNorm + Scale). Written by models/forks_gen_test.go through netspec.\n")
}

// fasterRCNNTest writes py-faster-rcnn's VGG-16 test net (faster_rcnn_end2end
// test.prototxt): the region proposal network on conv5_3, its proposals
// (the Python layer rpn.proposal_layer.ProposalLayer, in Go here), ROI
// pooling 7x7 at 1/16 and the fast R-CNN classifier and box regressor for
// VOC's 21 classes.
func fasterRCNNTest(height, width int) string {
	g := newGen("VGG_ILSVRC_16_layers")
	in := g.n.Tops("input", "Input", nil, []string{"data", "im_info"}, func(l *caffepb.LayerParameter) {
		l.InputParam = &caffepb.InputParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{1, 3, int64(height), int64(width)}}, {Dim: []int64{1, 3}}}}
	})
	data, imInfo := in[0], in[1]
	_, conv53 := g.vgg16(data)
	rpn := g.convRelu("rpn_conv/3x3", conv53, 512, 3, 1, 1)
	score := g.conv("rpn_cls_score", rpn, 18, 1, 1, 0, 1, true, xavier)
	deltas := g.conv("rpn_bbox_pred", rpn, 36, 1, 1, 0, 1, true, xavier)
	prob := g.n.Layer("rpn_cls_prob", "Softmax", netspec.On(g.reshape("rpn_cls_score_reshape", score, 0, 2, -1, 0)), nil)
	prob = g.reshape("rpn_cls_prob_reshape", prob, 0, 18, -1, 0)
	rois := g.n.Tops("proposal", "Python", netspec.On(prob, deltas, imInfo), []string{"rois"}, func(l *caffepb.LayerParameter) {
		l.PythonParam = &caffepb.PythonParameter{Module: proto.String("rpn.proposal_layer"), Layer: proto.String("ProposalLayer"),
			ParamStr: proto.String("'feat_stride': 16")}
	})[0]
	x := g.n.Layer("roi_pool5", "ROIPooling", netspec.On(conv53, rois), func(l *caffepb.LayerParameter) {
		l.RoiPoolingParam = &caffepb.ROIPoolingParameter{PooledW: u32(7), PooledH: u32(7), SpatialScale: proto.Float32(0.0625)}
	})
	for _, fc := range []string{"fc6", "fc7"} {
		x = g.relu("relu"+fc[2:], g.fc(fc, x, 4096, xavier))
		g.dropout("drop"+fc[2:], x, 0.5)
	}
	g.n.Layer("cls_prob", "Softmax", netspec.On(g.fc("cls_score", x, 21, xavier)), nil)
	g.fc("bbox_pred", x, 84, xavier)
	return g.text("# Faster R-CNN (Ren et al. 2015) VGG-16 test net in the layout of py-faster-rcnn's\n# faster_rcnn_end2end test.prototxt. Written by models/forks_gen_test.go through netspec.\n")
}

// fasterRCNNTrain writes Faster R-CNN's end-to-end VGG-16 training net as
// py-faster-rcnn's faster_rcnn_end2end train.prototxt lays it out (the
// RPN with its anchor targets and losses, the proposals, the proposal
// targets, RoI pooling and the detection losses), with one change: the
// images, im_info and ground-truth boxes come from an Input layer where
// py-faster-rcnn's RoIDataLayer reads its Python roidb.
func fasterRCNNTrain(height, width, boxes int) string {
	g := newGen("VGG_ILSVRC_16_layers")
	in := g.n.Tops("input", "Input", nil, []string{"data", "im_info", "gt_boxes"}, func(l *caffepb.LayerParameter) {
		l.InputParam = &caffepb.InputParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{1, 3, int64(height), int64(width)}}, {Dim: []int64{1, 3}}, {Dim: []int64{int64(boxes), 5}}}}
	})
	data, imInfo, gt := in[0], in[1], in[2]
	_, conv53 := g.vgg16(data)
	rpn := g.convRelu("rpn_conv/3x3", conv53, 512, 3, 1, 1)
	score := g.conv("rpn_cls_score", rpn, 18, 1, 1, 0, 1, true, xavier)
	deltas := g.conv("rpn_bbox_pred", rpn, 36, 1, 1, 0, 1, true, xavier)
	python := func(name, module, layer, param string, bottoms []netspec.Blob, tops ...string) []netspec.Blob {
		return g.n.Tops(name, "Python", bottoms, tops, func(l *caffepb.LayerParameter) {
			l.PythonParam = &caffepb.PythonParameter{Module: proto.String(module), Layer: proto.String(layer), ParamStr: proto.String(param)}
		})
	}
	smoothL1 := func(name string, bottoms []netspec.Blob, sigma float32) {
		g.n.Layer(name, "SmoothL1Loss", bottoms, func(l *caffepb.LayerParameter) {
			l.LossWeight = []float32{1}
			if sigma != 1 {
				l.SmoothL1LossParam = &caffepb.SmoothL1LossParameter{Sigma: proto.Float32(sigma)}
			}
		})
	}
	scoreReshape := g.reshape("rpn_cls_score_reshape", score, 0, 2, -1, 0)
	rpnData := python("rpn-data", "rpn.anchor_target_layer", "AnchorTargetLayer", "'feat_stride': 16", netspec.On(score, gt, imInfo, data),
		"rpn_labels", "rpn_bbox_targets", "rpn_bbox_inside_weights", "rpn_bbox_outside_weights")
	g.n.Layer("rpn_loss_cls", "SoftmaxWithLoss", netspec.On(scoreReshape, rpnData[0]), func(l *caffepb.LayerParameter) {
		l.PropagateDown = []bool{true, false}
		l.LossWeight = []float32{1}
		l.LossParam = &caffepb.LossParameter{IgnoreLabel: proto.Int32(-1), Normalize: proto.Bool(true)}
	})
	smoothL1("rpn_loss_bbox", netspec.On(deltas, rpnData[1], rpnData[2], rpnData[3]), 3)
	prob := g.n.Layer("rpn_cls_prob", "Softmax", netspec.On(scoreReshape), nil)
	prob = g.reshape("rpn_cls_prob_reshape", prob, 0, 18, -1, 0)
	rpnRois := python("proposal", "rpn.proposal_layer", "ProposalLayer", "'feat_stride': 16", netspec.On(prob, deltas, imInfo), "rpn_rois")[0]
	roiData := python("roi-data", "rpn.proposal_target_layer", "ProposalTargetLayer", "'num_classes': 21", netspec.On(rpnRois, gt),
		"rois", "labels", "bbox_targets", "bbox_inside_weights", "bbox_outside_weights")
	x := g.n.Layer("roi_pool5", "ROIPooling", netspec.On(conv53, roiData[0]), func(l *caffepb.LayerParameter) {
		l.RoiPoolingParam = &caffepb.ROIPoolingParameter{PooledW: u32(7), PooledH: u32(7), SpatialScale: proto.Float32(0.0625)}
	})
	for _, fc := range []string{"fc6", "fc7"} {
		x = g.relu("relu"+fc[2:], g.fc(fc, x, 4096, xavier))
		g.dropout("drop"+fc[2:], x, 0.5)
	}
	g.n.Layer("loss_cls", "SoftmaxWithLoss", netspec.On(g.fc("cls_score", x, 21, xavier), roiData[1]), func(l *caffepb.LayerParameter) {
		l.PropagateDown = []bool{true, false}
		l.LossWeight = []float32{1}
	})
	smoothL1("loss_bbox", netspec.On(g.fc("bbox_pred", x, 84, xavier), roiData[2], roiData[3], roiData[4]), 1)
	return g.text("# Faster R-CNN (Ren et al. 2015) VGG-16 end-to-end training net in the layout of py-faster-rcnn's\n" +
		"# faster_rcnn_end2end train.prototxt, with an Input layer in place of its Python RoIDataLayer.\n" +
		"# Written by models/forks_gen_test.go through netspec.\n")
}

// seResNetBlock writes a training net around one SE-ResNet bottleneck
// block (Hu et al. 2018) as SENet's Caffe lays it out: the residual
// branch's channels rescaled by global pooling, a 1x1 reduction by 16, ReLU,
// a 1x1 expansion and a sigmoid, then Axpy adds the shortcut.
func seResNetBlock() string {
	g := newGen("SE-ResNet-block")
	tops := g.n.Tops("data", "Input", nil, []string{"data", "label"}, func(l *caffepb.LayerParameter) {
		l.InputParam = &caffepb.InputParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{2, 64, 8, 8}}, {Dim: []int64{2}}}}
	})
	data, label := tops[0], tops[1]
	x := data
	for i, c := range []struct{ out, k, pad int }{{64, 1, 0}, {64, 3, 1}, {256, 1, 0}} {
		name := fmt.Sprintf("conv2_1_%dx%d", c.k, c.k)
		if i == 0 {
			name += "_reduce"
		} else if i == 2 {
			name += "_increase"
		}
		x = g.conv(name, x, c.out, c.k, 1, c.pad, 1, false, msra)
		g.bnScale(name+"/bn", name+"/scale", x)
		if i < 2 {
			g.relu(name+"/relu", x)
		}
	}
	squeeze := g.n.Layer("conv2_1_global_pool", "Pooling", netspec.On(x), func(l *caffepb.LayerParameter) {
		l.PoolingParam = &caffepb.PoolingParameter{Pool: aveP.Enum(), GlobalPooling: proto.Bool(true)}
	})
	squeeze = g.relu("conv2_1_1x1_down/relu", g.conv("conv2_1_1x1_down", squeeze, 16, 1, 1, 0, 1, true, msra))
	excite := g.n.InPlace("conv2_1_prob", "Sigmoid", g.conv("conv2_1_1x1_up", squeeze, 256, 1, 1, 0, 1, true, msra), nil)
	shortcut := g.conv("conv2_1_1x1_proj", data, 256, 1, 1, 0, 1, false, msra)
	g.bnScale("conv2_1_1x1_proj/bn", "conv2_1_1x1_proj/scale", shortcut)
	out := g.relu("conv2_1/relu", g.n.Layer("conv2_1", "Axpy", netspec.On(excite, x, shortcut), nil))
	g.n.Layer("loss", "SoftmaxWithLoss", netspec.On(g.fc("fc", g.pool("pool", out, aveP, 8, 1, 0), 10, msra), label), nil)
	return g.text("# One SE-ResNet bottleneck block (Hu et al. 2018) in the layout of SENet's Caffe (Axpy),\n# trained on a 10-class head. Written by models/forks_gen_test.go through netspec.\n")
}

// tsnFragment writes the start of BN-Inception as TSN's Caffe lays it out
// (BN layers with their own slope and bias after each convolution) through
// inception 3a, on a 10-class head, for training.
func tsnFragment() string {
	g := newGen("BN-Inception-fragment")
	const segments, crop, classes = 3, 64, 10
	tops := g.n.Tops("data", "VideoData", nil, []string{"data", "label"}, func(l *caffepb.LayerParameter) {
		l.VideoDataParam = &caffepb.VideoDataParameter{Source: proto.String("examples/tsn/videos.txt"), BatchSize: u32(2),
			NewLength: u32(1), NumSegments: u32(segments), Modality: caffepb.VideoDataParameter_RGB.Enum(), Shuffle: proto.Bool(true),
			NewHeight: u32(80), NewWidth: u32(96), NamePattern: proto.String("img_%05d.jpg")}
		l.TransformParam = &caffepb.TransformationParameter{CropSize: u32(crop), Mirror: proto.Bool(true), FixCrop: proto.Bool(true),
			MoreFixCrop: proto.Bool(true), MultiScale: proto.Bool(true), MaxDistort: proto.Int32(1), ScaleRatios: []float32{1, .875, .75, .66},
			IsFlow: proto.Bool(false), MeanValue: []float32{104, 117, 123}}
	})
	label := tops[1]
	// The segments' frames, stacked in the channels, become images of their own.
	data := g.reshape("data_reshape", tops[0], -1, 3, crop, crop)
	bnRelu := func(name string, bottom netspec.Blob, out, kernel, stride, pad int) netspec.Blob {
		x := g.conv(name, bottom, out, kernel, stride, pad, 1, true, xavier)
		x = g.n.Layer(name+"_bn", "BN", netspec.On(x), func(l *caffepb.LayerParameter) {
			l.Param = []*caffepb.ParamSpec{netspec.Param(1, 0), netspec.Param(1, 0), netspec.Param(0, 0), netspec.Param(0, 0)}
			l.BnParam = &caffepb.BNParameter{SlopeFiller: netspec.Filler("constant", func(f *caffepb.FillerParameter) { f.Value = proto.Float32(1) }),
				BiasFiller: netspec.Filler("constant", func(f *caffepb.FillerParameter) { f.Value = proto.Float32(0) }), Momentum: proto.Float32(0.9)}
		})
		return g.relu(name+"_relu", x)
	}
	x := bnRelu("conv1/7x7_s2", data, 64, 7, 2, 3)
	x = g.pool("pool1/3x3_s2", x, maxP, 3, 2, 0)
	x = bnRelu("conv2/3x3_reduce", x, 64, 1, 1, 0)
	x = bnRelu("conv2/3x3", x, 192, 3, 1, 1)
	x = g.pool("pool2/3x3_s2", x, maxP, 3, 2, 0)
	b1 := bnRelu("inception_3a/1x1", x, 64, 1, 1, 0)
	b2 := bnRelu("inception_3a/3x3", bnRelu("inception_3a/3x3_reduce", x, 64, 1, 1, 0), 64, 3, 1, 1)
	b3 := bnRelu("inception_3a/double_3x3_reduce", x, 64, 1, 1, 0)
	b3 = bnRelu("inception_3a/double_3x3_2", bnRelu("inception_3a/double_3x3_1", b3, 96, 3, 1, 1), 96, 3, 1, 1)
	b4 := bnRelu("inception_3a/pool_proj", g.pool("inception_3a/pool", x, aveP, 3, 1, 1), 32, 1, 1, 0)
	x = g.n.Layer("inception_3a/output", "Concat", netspec.On(b1, b2, b3, b4), nil)
	x = g.n.Layer("global_pool", "Pooling", netspec.On(x), func(l *caffepb.LayerParameter) {
		l.PoolingParam = &caffepb.PoolingParameter{Pool: aveP.Enum(), GlobalPooling: proto.Bool(true)}
	})
	// TSN's segmental consensus: each video's segment scores averaged.
	x = g.reshape("reshape_fc", g.fc("fc-action", x, classes, xavier), -1, 1, segments, classes)
	x = g.n.Layer("pool_fusion", "Pooling", netspec.On(x), func(l *caffepb.LayerParameter) {
		l.PoolingParam = &caffepb.PoolingParameter{Pool: aveP.Enum(), KernelH: u32(segments), KernelW: u32(1)}
	})
	x = g.reshape("reshape_fusion", x, -1, classes)
	g.n.Layer("loss", "SoftmaxWithLoss", netspec.On(x, label), nil)
	return g.text("# The start of BN-Inception (Ioffe and Szegedy 2015) through inception 3a, in the layout of\n" +
		"# TSN's Caffe (yjxiong/caffe): VideoData with three segments and TSN's multi-scale fixed crops, BN layers,\n" +
		"# the segmental consensus, on a 10-class head. Written by models/forks_gen_test.go.\n")
}

// forkModels are the fork-style nets' files and contents.
func forkModels() map[string]string {
	return map[string]string{
		"forks/ssd300_vgg16_deploy.prototxt":     ssd300(),
		"forks/ssd300_vgg16_train.prototxt":      ssd300Train(),
		"forks/mobilenet_ssd_deploy.prototxt":    mobilenetSSD(),
		"forks/faster_rcnn_vgg16_test.prototxt":  fasterRCNNTest(224, 224),
		"forks/faster_rcnn_vgg16_train.prototxt": fasterRCNNTrain(224, 224, 2),
		"forks/se_resnet_block_train.prototxt":   seResNetBlock(),
		"forks/tsn_bn_inception_train.prototxt":  tsnFragment(),
	}
}
