package models_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netspec"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// The ImageNet models GoogLeNet, ResNet-50 and MobileNet are written by
// the generator below, from their papers' architectures, in the layout of
// the Caffe models people use (BVLC's bvlc_googlenet, Kaiming He's
// ResNet-50 with BatchNorm + Scale, the Caffe MobileNet v1), through
// netspec: by hand a 50-layer ResNet is 2,000 error-prone lines. The committed files must be
// what it writes; `go test ./models -run TestGeneratedModels -update`
// rewrites them.
var update = flag.Bool("update", false, "rewrite the generated models' prototxt files")

// gen writes a net through netspec, with the layer kinds these models use.
type gen struct{ n *netspec.Net }

func newGen(name string) gen { return gen{netspec.New(name)} }

// text is the net in Caffe's text format, after a comment header.
func (g gen) text(header string) string {
	text, err := g.n.Prototxt()
	if err != nil {
		panic(err) // a mistake in this generator
	}
	return header + text
}

func u32(v int) *uint32 { return proto.Uint32(uint32(v)) }

// imagenetData writes the TRAIN and TEST Data layers of an ImageNet
// train_val net: crop crop, mean values (BGR), batches train and test.
func (g gen) imagenetData(crop, train, test int) (data, label netspec.Blob) {
	for _, ph := range []struct {
		phase  caffepb.Phase
		source string
		mirror bool
		batch  int
	}{{caffepb.Phase_TRAIN, "ilsvrc12_train_lmdb", true, train}, {caffepb.Phase_TEST, "ilsvrc12_val_lmdb", false, test}} {
		tops := g.n.Tops("data", "Data", nil, []string{"data", "label"}, func(l *caffepb.LayerParameter) {
			l.Include = []*caffepb.NetStateRule{netspec.Phase(ph.phase)}
			l.TransformParam = &caffepb.TransformationParameter{Mirror: proto.Bool(ph.mirror), CropSize: u32(crop), MeanValue: []float32{104, 117, 123}}
			l.DataParam = &caffepb.DataParameter{Source: proto.String("data/ilsvrc12/" + ph.source), BatchSize: u32(ph.batch), Backend: caffepb.DataParameter_LMDB.Enum()}
		})
		data, label = tops[0], tops[1]
	}
	return data, label
}

// deployInput writes a deploy net's Input layer of batch images of size x size.
func (g gen) deployInput(batch, size int) netspec.Blob {
	return g.n.Layer("data", "Input", nil, func(l *caffepb.LayerParameter) {
		l.InputParam = &caffepb.InputParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{int64(batch), 3, int64(size), int64(size)}}}}
	})
}

// conv writes a convolution; bias false for the ones a BatchNorm follows.
func (g gen) conv(name string, bottom netspec.Blob, out, kernel, stride, pad, group int, bias bool, weight string) netspec.Blob {
	return g.n.Layer(name, "Convolution", netspec.On(bottom), func(l *caffepb.LayerParameter) {
		l.Param = []*caffepb.ParamSpec{netspec.Param(1, 1)}
		c := &caffepb.ConvolutionParameter{NumOutput: u32(out), KernelSize: []uint32{uint32(kernel)}, WeightFiller: netspec.Filler(weight)}
		if bias {
			l.Param = append(l.Param, netspec.Param(2, 0))
			c.BiasFiller = netspec.Filler("constant", func(f *caffepb.FillerParameter) { f.Value = proto.Float32(0.2) })
		} else {
			c.BiasTerm = proto.Bool(false)
		}
		if pad > 0 {
			c.Pad = []uint32{uint32(pad)}
		}
		if stride > 1 {
			c.Stride = []uint32{uint32(stride)}
		}
		if group > 1 {
			c.Group = u32(group)
		}
		l.ConvolutionParam = c
	})
}

// relu writes an in-place ReLU.
func (g gen) relu(name string, b netspec.Blob) netspec.Blob { return g.n.InPlace(name, "ReLU", b, nil) }

// bnScale writes BatchNorm (its statistics not learned by the solver) and
// Scale (the learned affine part) in place, as Caffe's ResNets do.
func (g gen) bnScale(bn, scale string, b netspec.Blob) netspec.Blob {
	g.n.InPlace(bn, "BatchNorm", b, func(l *caffepb.LayerParameter) {
		l.Param = []*caffepb.ParamSpec{netspec.Param(0, 0), netspec.Param(0, 0), netspec.Param(0, 0)}
	})
	return g.n.InPlace(scale, "Scale", b, func(l *caffepb.LayerParameter) {
		l.ScaleParam = &caffepb.ScaleParameter{BiasTerm: proto.Bool(true)}
	})
}

// pool writes a pooling layer.
func (g gen) pool(name string, bottom netspec.Blob, method caffepb.PoolingParameter_PoolMethod, kernel, stride, pad int) netspec.Blob {
	return g.n.Layer(name, "Pooling", netspec.On(bottom), func(l *caffepb.LayerParameter) {
		l.PoolingParam = &caffepb.PoolingParameter{Pool: method.Enum(), KernelSize: u32(kernel), Stride: u32(stride)}
		if pad > 0 {
			l.PoolingParam.Pad = u32(pad)
		}
	})
}

// fc writes an inner product.
func (g gen) fc(name string, bottom netspec.Blob, out int, weight string) netspec.Blob {
	return g.n.Layer(name, "InnerProduct", netspec.On(bottom), func(l *caffepb.LayerParameter) {
		l.Param = []*caffepb.ParamSpec{netspec.Param(1, 1), netspec.Param(2, 0)}
		l.InnerProductParam = &caffepb.InnerProductParameter{NumOutput: u32(out), WeightFiller: netspec.Filler(weight),
			BiasFiller: netspec.Filler("constant", func(f *caffepb.FillerParameter) { f.Value = proto.Float32(0) })}
	})
}

// dropout writes an in-place Dropout.
func (g gen) dropout(name string, b netspec.Blob, ratio float32) {
	g.n.InPlace(name, "Dropout", b, func(l *caffepb.LayerParameter) {
		l.DropoutParam = &caffepb.DropoutParameter{DropoutRatio: proto.Float32(ratio)}
	})
}

// head writes the classifier's ending: a deploy net's Softmax, or a
// train_val net's loss and (TEST) top-1 and top-5 accuracies.
func (g gen) head(logits, label netspec.Blob, deploy bool, lossWeight float32, suffix string) {
	if deploy {
		g.n.Layer("prob", "Softmax", netspec.On(logits), nil)
		return
	}
	g.n.Layer("loss"+suffix, "SoftmaxWithLoss", netspec.On(logits, label), func(l *caffepb.LayerParameter) {
		if lossWeight != 1 {
			l.LossWeight = []float32{lossWeight}
		}
	})
	for _, k := range []int{1, 5} {
		name := "accuracy" + suffix
		if k > 1 {
			name += "_top5"
		}
		g.n.Layer(name, "Accuracy", netspec.On(logits, label), func(l *caffepb.LayerParameter) {
			l.Include = []*caffepb.NetStateRule{netspec.Phase(caffepb.Phase_TEST)}
			if k > 1 {
				l.AccuracyParam = &caffepb.AccuracyParameter{TopK: u32(k)}
			}
		})
	}
}

// input writes the deploy input or the train_val data layers.
func (g gen) input(deploy bool, train, test int) (data, label netspec.Blob) {
	if deploy {
		return g.deployInput(1, 224), netspec.Blob{}
	}
	return g.imagenetData(224, train, test)
}

const (
	msra   = "msra"
	xavier = "xavier"
	maxP   = caffepb.PoolingParameter_MAX
	aveP   = caffepb.PoolingParameter_AVE
)

// resnet50 writes ResNet-50 (He et al. 2016): 7x7 stem, bottleneck blocks
// of 3, 4, 6 and 3 with projection shortcuts at each stage's first block
// (stride 2 on its first 1x1, as Caffe's ResNet-50), BatchNorm + Scale
// after every convolution.
func resnet50(deploy bool) string {
	g := newGen("ResNet-50")
	data, label := g.input(deploy, 32, 25)
	x := g.conv("conv1", data, 64, 7, 2, 3, 1, false, msra)
	g.relu("conv1_relu", g.bnScale("bn_conv1", "scale_conv1", x))
	in := g.pool("pool1", x, maxP, 3, 2, 0)
	for s, stage := range []struct{ blocks, width int }{{3, 64}, {4, 128}, {6, 256}, {3, 512}} {
		for k := range stage.blocks {
			name := fmt.Sprintf("res%d%c", s+2, 'a'+k)
			stride := 1
			if k == 0 && s > 0 {
				stride = 2
			}
			shortcut := in
			if k == 0 {
				shortcut = g.conv(name+"_branch1", in, 4*stage.width, 1, stride, 0, 1, false, msra)
				g.bnScale("bn"+name[3:]+"_branch1", "scale"+name[3:]+"_branch1", shortcut)
			}
			prev := in
			for i, c := range []struct {
				part           string
				out, k, st, pd int
			}{{"2a", stage.width, 1, stride, 0}, {"2b", stage.width, 3, 1, 1}, {"2c", 4 * stage.width, 1, 1, 0}} {
				top := name + "_branch" + c.part
				prev = g.conv(top, prev, c.out, c.k, c.st, c.pd, 1, false, msra)
				g.bnScale("bn"+name[3:]+"_branch"+c.part, "scale"+name[3:]+"_branch"+c.part, prev)
				if i < 2 {
					g.relu(top+"_relu", prev)
				}
			}
			in = g.relu(name+"_relu", g.n.Layer(name, "Eltwise", netspec.On(shortcut, prev), nil))
		}
	}
	g.head(g.fc("fc1000", g.pool("pool5", in, aveP, 7, 1, 0), 1000, msra), label, deploy, 1, "")
	return g.text("# ResNet-50 (He, Zhang, Ren, Sun 2016) for 224x224 ImageNet crops, in the\n# layout of Caffe's ResNet-50: BatchNorm + Scale after each convolution.\n# Written by models/gen_test.go through netspec.\n")
}

// googlenet writes GoogLeNet (Szegedy et al. 2015) as BVLC's
// bvlc_googlenet: nine inception modules, LRN after the first two
// convolutions, and in train_val the two auxiliary classifiers (loss
// weight 0.3) after inception 4a and 4d.
func googlenet(deploy bool) string {
	g := newGen("GoogLeNet")
	data, label := g.input(deploy, 32, 50)
	lrn := func(name string, bottom netspec.Blob) netspec.Blob {
		return g.n.Layer(name, "LRN", netspec.On(bottom), func(l *caffepb.LayerParameter) {
			l.LrnParam = &caffepb.LRNParameter{LocalSize: u32(5), Alpha: proto.Float32(0.0001), Beta: proto.Float32(0.75)}
		})
	}
	x := g.relu("conv1/relu_7x7", g.conv("conv1/7x7_s2", data, 64, 7, 2, 3, 1, true, xavier))
	x = lrn("pool1/norm1", g.pool("pool1/3x3_s2", x, maxP, 3, 2, 0))
	x = g.relu("conv2/relu_3x3_reduce", g.conv("conv2/3x3_reduce", x, 64, 1, 1, 0, 1, true, xavier))
	x = g.relu("conv2/relu_3x3", g.conv("conv2/3x3", x, 192, 3, 1, 1, 1, true, xavier))
	x = g.pool("pool2/3x3_s2", lrn("conv2/norm2", x), maxP, 3, 2, 0)
	inception := func(name string, in netspec.Blob, c1, r3, c3, r5, c5, pp int) netspec.Blob {
		p := "inception_" + name + "/"
		unit := func(n string, bottom netspec.Blob, out, k, pad int) netspec.Blob {
			return g.relu(p+"relu_"+n, g.conv(p+n, bottom, out, k, 1, pad, 1, true, xavier))
		}
		a := unit("1x1", in, c1, 1, 0)
		b := unit("3x3", unit("3x3_reduce", in, r3, 1, 0), c3, 3, 1)
		c := unit("5x5", unit("5x5_reduce", in, r5, 1, 0), c5, 5, 2)
		d := unit("pool_proj", g.pool(p+"pool", in, maxP, 3, 1, 1), pp, 1, 0)
		return g.n.Layer(p+"output", "Concat", netspec.On(a, b, c, d), nil)
	}
	aux := func(n int, in netspec.Blob) {
		if deploy {
			return
		}
		p := fmt.Sprintf("loss%d/", n)
		x := g.relu(p+"relu_conv", g.conv(p+"conv", g.pool(p+"ave_pool", in, aveP, 5, 3, 0), 128, 1, 1, 0, 1, true, xavier))
		x = g.relu(p+"relu_fc", g.fc(p+"fc", x, 1024, xavier))
		g.dropout(p+"drop_fc", x, 0.7)
		g.head(g.fc(p+"classifier", x, 1000, xavier), label, false, 0.3, fmt.Sprintf("%d", n))
	}
	x = inception("3a", x, 64, 96, 128, 16, 32, 32)
	x = inception("3b", x, 128, 128, 192, 32, 96, 64)
	x = inception("4a", g.pool("pool3/3x3_s2", x, maxP, 3, 2, 0), 192, 96, 208, 16, 48, 64)
	aux(1, x)
	x = inception("4b", x, 160, 112, 224, 24, 64, 64)
	x = inception("4c", x, 128, 128, 256, 24, 64, 64)
	x = inception("4d", x, 112, 144, 288, 32, 64, 64)
	aux(2, x)
	x = inception("4e", x, 256, 160, 320, 32, 128, 128)
	x = inception("5a", g.pool("pool4/3x3_s2", x, maxP, 3, 2, 0), 256, 160, 320, 32, 128, 128)
	x = inception("5b", x, 384, 192, 384, 48, 128, 128)
	x = g.pool("pool5/7x7_s1", x, aveP, 7, 1, 0)
	g.dropout("pool5/drop_7x7_s1", x, 0.4)
	g.head(g.fc("loss3/classifier", x, 1000, xavier), label, deploy, 1, "")
	return g.text("# GoogLeNet (Szegedy et al. 2015) for 224x224 ImageNet crops, as BVLC's\n# bvlc_googlenet (auxiliary classifiers in train_val only).\n# Written by models/gen_test.go through netspec.\n")
}

// mobilenet writes MobileNet v1 (Howard et al. 2017, width 1.0): a 3x3
// stem, thirteen depthwise separable blocks (a 3x3 convolution with group
// equal to its channels, then a 1x1), each convolution followed by
// BatchNorm + Scale + ReLU.
func mobilenet(deploy bool) string {
	g := newGen("MobileNet")
	data, label := g.input(deploy, 32, 25)
	unit := func(name string, bottom netspec.Blob, out, kernel, stride, group int) netspec.Blob {
		x := g.conv(name, bottom, out, kernel, stride, kernel/2, group, false, msra)
		g.bnScale(name+"/bn", name+"/scale", x)
		return g.relu(name+"/relu", x)
	}
	in, ch := unit("conv1", data, 32, 3, 2, 1), 32
	for i, blk := range []struct{ out, stride int }{{64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2},
		{512, 1}, {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}} {
		dw := unit(fmt.Sprintf("conv%d_dw", i+2), in, ch, 3, blk.stride, ch)
		in, ch = unit(fmt.Sprintf("conv%d_pw", i+2), dw, blk.out, 1, 1, 1), blk.out
	}
	g.head(g.fc("fc7", g.pool("pool6", in, aveP, 7, 1, 0), 1000, msra), label, deploy, 1, "")
	return g.text("# MobileNet v1 (Howard et al. 2017, width 1.0) for 224x224 ImageNet crops:\n# depthwise convolutions are Convolution layers with group == channels.\n# Written by models/gen_test.go through netspec.\n")
}

// imagenetSolver writes a solver for a generated train_val net.
func imagenetSolver(dir, net string, lr float64, policy string) string {
	return fmt.Sprintf(`# SGD with momentum for %s on ImageNet (written by models/gen_test.go).
net: "models/%s/%s"
test_iter: 2000
test_interval: 5000
base_lr: %g
%s
display: 20
max_iter: 600000
momentum: 0.9
weight_decay: 0.0001
snapshot: 10000
snapshot_prefix: "data/ilsvrc12/%s"
solver_mode: GPU
`, dir, dir, net, lr, policy, dir)
}

// generated are the generated models' files and their contents.
func generated() map[string]string {
	files := map[string]string{
		"resnet50/train_val.prototxt":  resnet50(false),
		"resnet50/deploy.prototxt":     resnet50(true),
		"resnet50/solver.prototxt":     imagenetSolver("resnet50", "train_val.prototxt", 0.1, "lr_policy: \"step\"\ngamma: 0.1\nstepsize: 150000"),
		"googlenet/train_val.prototxt": googlenet(false),
		"googlenet/deploy.prototxt":    googlenet(true),
		"googlenet/solver.prototxt":    imagenetSolver("googlenet", "train_val.prototxt", 0.01, "lr_policy: \"poly\"\npower: 0.5"),
		"mobilenet/train_val.prototxt": mobilenet(false),
		"mobilenet/deploy.prototxt":    mobilenet(true),
		"mobilenet/solver.prototxt":    imagenetSolver("mobilenet", "train_val.prototxt", 0.1, "lr_policy: \"poly\"\npower: 1"),
	}
	for path, text := range forkModels() {
		files[path] = text
	}
	// The README's SSD example: tinySSD on examples/ssd's boxes after
	// convert_annoset.
	files["../examples/ssd/tiny_ssd_train.prototxt"] = "# A small SSD (two heads, four priors each) for examples/ssd's 48 x 48 images, read by AnnotatedData\n" +
		"# with SSD's augmentation after `gocaffe convert_annoset` (see docs/forks.md). Written by models/gen_test.go.\n" +
		tinySSDFromLMDB("examples/ssd/trainval_lmdb", "examples/ssd/trainval_lmdb", 8, 16)
	return files
}

// The committed files are what the generator writes, and parse.
func TestGeneratedModels(t *testing.T) {
	for path, text := range generated() {
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != text {
			t.Errorf("%s differs from what models/gen_test.go writes (%v): run go test ./models -run TestGeneratedModels -update", path, err)
		}
		var m proto.Message = &caffepb.NetParameter{}
		if strings.HasSuffix(path, "solver.prototxt") {
			m = &caffepb.SolverParameter{}
		}
		if err := protoio.ReadProtoFromTextFile(path, m); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// The learned parameters of the generated deploy nets number what their
// papers and the Caffe models report, BatchNorm's statistics (which no
// solver learns) left out: GoogLeNet 6,998,552 (BVLC's bvlc_googlenet),
// ResNet-50 25,557,032, MobileNet 4,231,976.
func TestGeneratedParamCounts(t *testing.T) {
	for _, c := range []struct {
		dir      string
		min, max int
	}{{"googlenet", 6_998_552, 6_998_552}, {"resnet50", 25_557_032, 25_557_032}, {"mobilenet", 4_231_976, 4_231_976}} {
		n, err := net.New[float32](readNet(t, filepath.Join(c.dir, "deploy.prototxt")), state(caffepb.Phase_TEST))
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for _, l := range n.Layers() {
			if l.Type() == "BatchNorm" {
				continue
			}
			for _, b := range l.LayerBase().Blobs() {
				count += b.Count()
			}
		}
		n.Close()
		t.Logf("%s: %d learned parameters", c.dir, count)
		if count < c.min || count > c.max {
			t.Errorf("%s has %d learned parameters, want %d to %d", c.dir, count, c.min, c.max)
		}
	}
}
