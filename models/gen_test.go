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
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// The ImageNet models GoogLeNet, ResNet-50 and MobileNet are written by
// the generator below, from their papers' architectures, in the layout of
// the Caffe models people use (BVLC's bvlc_googlenet, Kaiming He's
// ResNet-50 with BatchNorm + Scale, the Caffe MobileNet v1): by hand a
// 50-layer ResNet is 2,000 error-prone lines. The committed files must be
// what it writes; `go test ./models -run TestGeneratedModels -update`
// rewrites them.
var update = flag.Bool("update", false, "rewrite the generated models' prototxt files")

// netText accumulates a prototxt.
type netText struct{ strings.Builder }

func (b *netText) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// imagenetData writes the TRAIN and TEST Data layers of an ImageNet
// train_val net: crop crop, mean values (BGR), batches train and test.
func (b *netText) imagenetData(crop, train, test int) {
	for _, ph := range []struct {
		phase, source string
		mirror        bool
		batch         int
	}{{"TRAIN", "ilsvrc12_train_lmdb", true, train}, {"TEST", "ilsvrc12_val_lmdb", false, test}} {
		b.f("layer {\n  name: \"data\"\n  type: \"Data\"\n  top: \"data\"\n  top: \"label\"\n  include { phase: %s }\n", ph.phase)
		b.f("  transform_param { mirror: %v crop_size: %d mean_value: 104 mean_value: 117 mean_value: 123 }\n", ph.mirror, crop)
		b.f("  data_param { source: \"data/ilsvrc12/%s\" batch_size: %d backend: LMDB }\n}\n", ph.source, ph.batch)
	}
}

// deployInput writes a deploy net's Input layer of one image of size x size.
func (b *netText) deployInput(batch, size int) {
	b.f("layer {\n  name: \"data\"\n  type: \"Input\"\n  top: \"data\"\n  input_param { shape { dim: %d dim: 3 dim: %d dim: %d } }\n}\n", batch, size, size)
}

// conv writes a convolution; bias false for the ones a BatchNorm follows.
func (b *netText) conv(name, bottom string, out, kernel, stride, pad, group int, bias bool, weight string) {
	b.f("layer {\n  name: %q\n  type: \"Convolution\"\n  bottom: %q\n  top: %q\n", name, bottom, name)
	if bias {
		b.f("  param { lr_mult: 1 decay_mult: 1 }\n  param { lr_mult: 2 decay_mult: 0 }\n")
	} else {
		b.f("  param { lr_mult: 1 decay_mult: 1 }\n")
	}
	b.f("  convolution_param {\n    num_output: %d\n", out)
	if !bias {
		b.f("    bias_term: false\n")
	}
	if pad > 0 {
		b.f("    pad: %d\n", pad)
	}
	b.f("    kernel_size: %d\n", kernel)
	if stride > 1 {
		b.f("    stride: %d\n", stride)
	}
	if group > 1 {
		b.f("    group: %d\n", group)
	}
	b.f("    weight_filler { %s }\n", weight)
	if bias {
		b.f("    bias_filler { type: \"constant\" value: 0.2 }\n")
	}
	b.f("  }\n}\n")
}

// relu writes an in-place ReLU.
func (b *netText) relu(name, blob string) {
	b.f("layer {\n  name: %q\n  type: \"ReLU\"\n  bottom: %q\n  top: %q\n}\n", name, blob, blob)
}

// bnScale writes BatchNorm (its statistics not learned by the solver) and
// Scale (the learned affine part) in place, as Caffe's ResNets do.
func (b *netText) bnScale(bn, scale, blob string) {
	b.f("layer {\n  name: %q\n  type: \"BatchNorm\"\n  bottom: %q\n  top: %q\n", bn, blob, blob)
	b.f("  param { lr_mult: 0 decay_mult: 0 }\n  param { lr_mult: 0 decay_mult: 0 }\n  param { lr_mult: 0 decay_mult: 0 }\n}\n")
	b.f("layer {\n  name: %q\n  type: \"Scale\"\n  bottom: %q\n  top: %q\n  scale_param { bias_term: true }\n}\n", scale, blob, blob)
}

// pool writes a pooling layer.
func (b *netText) pool(name, bottom, method string, kernel, stride, pad int) {
	b.f("layer {\n  name: %q\n  type: \"Pooling\"\n  bottom: %q\n  top: %q\n  pooling_param { pool: %s kernel_size: %d stride: %d", name, bottom, name, method, kernel, stride)
	if pad > 0 {
		b.f(" pad: %d", pad)
	}
	b.f(" }\n}\n")
}

// fc writes an inner product.
func (b *netText) fc(name, bottom string, out int, weight string) {
	b.f("layer {\n  name: %q\n  type: \"InnerProduct\"\n  bottom: %q\n  top: %q\n", name, bottom, name)
	b.f("  param { lr_mult: 1 decay_mult: 1 }\n  param { lr_mult: 2 decay_mult: 0 }\n")
	b.f("  inner_product_param {\n    num_output: %d\n    weight_filler { %s }\n    bias_filler { type: \"constant\" value: 0 }\n  }\n}\n", out, weight)
}

// head writes the classifier's ending: a deploy net's Softmax, or a
// train_val net's loss and (TEST) top-1 and top-5 accuracies.
func (b *netText) head(logits string, deploy bool, lossWeight float64, suffix string) {
	if deploy {
		b.f("layer {\n  name: \"prob\"\n  type: \"Softmax\"\n  bottom: %q\n  top: \"prob\"\n}\n", logits)
		return
	}
	b.f("layer {\n  name: \"loss%s\"\n  type: \"SoftmaxWithLoss\"\n  bottom: %q\n  bottom: \"label\"\n  top: \"loss%s\"\n", suffix, logits, suffix)
	if lossWeight != 1 {
		b.f("  loss_weight: %g\n", lossWeight)
	}
	b.f("}\n")
	for _, k := range []int{1, 5} {
		name := "accuracy" + suffix
		if k > 1 {
			name += "_top5"
		}
		b.f("layer {\n  name: %q\n  type: \"Accuracy\"\n  bottom: %q\n  bottom: \"label\"\n  top: %q\n  include { phase: TEST }\n", name, logits, name)
		if k > 1 {
			b.f("  accuracy_param { top_k: %d }\n", k)
		}
		b.f("}\n")
	}
}

const (
	msra   = `type: "msra"`
	xavier = `type: "xavier"`
)

// resnet50 writes ResNet-50 (He et al. 2016): 7x7 stem, bottleneck blocks
// of 3, 4, 6 and 3 with projection shortcuts at each stage's first block
// (stride 2 on its first 1x1, as Caffe's ResNet-50), BatchNorm + Scale
// after every convolution.
func resnet50(deploy bool) string {
	var b netText
	b.f("# ResNet-50 (He, Zhang, Ren, Sun 2016) for 224x224 ImageNet crops, in the\n# layout of Caffe's ResNet-50: BatchNorm + Scale after each convolution.\n# Written by models/gen_test.go.\nname: \"ResNet-50\"\n")
	if deploy {
		b.deployInput(1, 224)
	} else {
		b.imagenetData(224, 32, 25)
	}
	b.conv("conv1", "data", 64, 7, 2, 3, 1, false, msra)
	b.bnScale("bn_conv1", "scale_conv1", "conv1")
	b.relu("conv1_relu", "conv1")
	b.pool("pool1", "conv1", "MAX", 3, 2, 0)
	in := "pool1"
	for s, stage := range []struct{ blocks, width int }{{3, 64}, {4, 128}, {6, 256}, {3, 512}} {
		for k := range stage.blocks {
			name := fmt.Sprintf("res%d%c", s+2, 'a'+k)
			stride := 1
			if k == 0 && s > 0 {
				stride = 2
			}
			shortcut := in
			if k == 0 {
				b.conv(name+"_branch1", in, 4*stage.width, 1, stride, 0, 1, false, msra)
				b.bnScale("bn"+name[3:]+"_branch1", "scale"+name[3:]+"_branch1", name+"_branch1")
				shortcut = name + "_branch1"
			}
			prev := in
			for i, c := range []struct {
				part           string
				out, k, st, pd int
			}{{"2a", stage.width, 1, stride, 0}, {"2b", stage.width, 3, 1, 1}, {"2c", 4 * stage.width, 1, 1, 0}} {
				top := name + "_branch" + c.part
				b.conv(top, prev, c.out, c.k, c.st, c.pd, 1, false, msra)
				b.bnScale("bn"+name[3:]+"_branch"+c.part, "scale"+name[3:]+"_branch"+c.part, top)
				if i < 2 {
					b.relu(top+"_relu", top)
				}
				prev = top
			}
			b.f("layer {\n  name: %q\n  type: \"Eltwise\"\n  bottom: %q\n  bottom: %q\n  top: %q\n}\n", name, shortcut, prev, name)
			b.relu(name+"_relu", name)
			in = name
		}
	}
	b.pool("pool5", in, "AVE", 7, 1, 0)
	b.fc("fc1000", "pool5", 1000, msra)
	b.head("fc1000", deploy, 1, "")
	return b.String()
}

// googlenet writes GoogLeNet (Szegedy et al. 2015) as BVLC's
// bvlc_googlenet: nine inception modules, LRN after the first two
// convolutions, and in train_val the two auxiliary classifiers (loss
// weight 0.3) after inception 4a and 4d.
func googlenet(deploy bool) string {
	var b netText
	b.f("# GoogLeNet (Szegedy et al. 2015) for 224x224 ImageNet crops, as BVLC's\n# bvlc_googlenet (auxiliary classifiers in train_val only).\n# Written by models/gen_test.go.\nname: \"GoogLeNet\"\n")
	if deploy {
		b.deployInput(1, 224)
	} else {
		b.imagenetData(224, 32, 50)
	}
	b.conv("conv1/7x7_s2", "data", 64, 7, 2, 3, 1, true, xavier)
	b.relu("conv1/relu_7x7", "conv1/7x7_s2")
	b.pool("pool1/3x3_s2", "conv1/7x7_s2", "MAX", 3, 2, 0)
	lrn := func(name, bottom string) {
		b.f("layer {\n  name: %q\n  type: \"LRN\"\n  bottom: %q\n  top: %q\n  lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }\n}\n", name, bottom, name)
	}
	lrn("pool1/norm1", "pool1/3x3_s2")
	b.conv("conv2/3x3_reduce", "pool1/norm1", 64, 1, 1, 0, 1, true, xavier)
	b.relu("conv2/relu_3x3_reduce", "conv2/3x3_reduce")
	b.conv("conv2/3x3", "conv2/3x3_reduce", 192, 3, 1, 1, 1, true, xavier)
	b.relu("conv2/relu_3x3", "conv2/3x3")
	lrn("conv2/norm2", "conv2/3x3")
	b.pool("pool2/3x3_s2", "conv2/norm2", "MAX", 3, 2, 0)
	inception := func(name, in string, c1, r3, c3, r5, c5, pp int) string {
		p := "inception_" + name + "/"
		b.conv(p+"1x1", in, c1, 1, 1, 0, 1, true, xavier)
		b.relu(p+"relu_1x1", p+"1x1")
		b.conv(p+"3x3_reduce", in, r3, 1, 1, 0, 1, true, xavier)
		b.relu(p+"relu_3x3_reduce", p+"3x3_reduce")
		b.conv(p+"3x3", p+"3x3_reduce", c3, 3, 1, 1, 1, true, xavier)
		b.relu(p+"relu_3x3", p+"3x3")
		b.conv(p+"5x5_reduce", in, r5, 1, 1, 0, 1, true, xavier)
		b.relu(p+"relu_5x5_reduce", p+"5x5_reduce")
		b.conv(p+"5x5", p+"5x5_reduce", c5, 5, 1, 2, 1, true, xavier)
		b.relu(p+"relu_5x5", p+"5x5")
		b.pool(p+"pool", in, "MAX", 3, 1, 1)
		b.conv(p+"pool_proj", p+"pool", pp, 1, 1, 0, 1, true, xavier)
		b.relu(p+"relu_pool_proj", p+"pool_proj")
		b.f("layer {\n  name: %q\n  type: \"Concat\"\n  bottom: %q\n  bottom: %q\n  bottom: %q\n  bottom: %q\n  top: %q\n}\n",
			p+"output", p+"1x1", p+"3x3", p+"5x5", p+"pool_proj", p+"output")
		return p + "output"
	}
	aux := func(n int, in string) {
		if deploy {
			return
		}
		p := fmt.Sprintf("loss%d/", n)
		b.pool(p+"ave_pool", in, "AVE", 5, 3, 0)
		b.conv(p+"conv", p+"ave_pool", 128, 1, 1, 0, 1, true, xavier)
		b.relu(p+"relu_conv", p+"conv")
		b.fc(p+"fc", p+"conv", 1024, xavier)
		b.relu(p+"relu_fc", p+"fc")
		b.f("layer {\n  name: %q\n  type: \"Dropout\"\n  bottom: %q\n  top: %q\n  dropout_param { dropout_ratio: 0.7 }\n}\n", p+"drop_fc", p+"fc", p+"fc")
		b.fc(p+"classifier", p+"fc", 1000, xavier)
		b.head(p+"classifier", false, 0.3, fmt.Sprintf("%d", n))
	}
	x := inception("3a", "pool2/3x3_s2", 64, 96, 128, 16, 32, 32)
	x = inception("3b", x, 128, 128, 192, 32, 96, 64)
	b.pool("pool3/3x3_s2", x, "MAX", 3, 2, 0)
	x = inception("4a", "pool3/3x3_s2", 192, 96, 208, 16, 48, 64)
	aux(1, x)
	x = inception("4b", x, 160, 112, 224, 24, 64, 64)
	x = inception("4c", x, 128, 128, 256, 24, 64, 64)
	x = inception("4d", x, 112, 144, 288, 32, 64, 64)
	aux(2, x)
	x = inception("4e", x, 256, 160, 320, 32, 128, 128)
	b.pool("pool4/3x3_s2", x, "MAX", 3, 2, 0)
	x = inception("5a", "pool4/3x3_s2", 256, 160, 320, 32, 128, 128)
	x = inception("5b", x, 384, 192, 384, 48, 128, 128)
	b.pool("pool5/7x7_s1", x, "AVE", 7, 1, 0)
	b.f("layer {\n  name: \"pool5/drop_7x7_s1\"\n  type: \"Dropout\"\n  bottom: \"pool5/7x7_s1\"\n  top: \"pool5/7x7_s1\"\n  dropout_param { dropout_ratio: 0.4 }\n}\n")
	b.fc("loss3/classifier", "pool5/7x7_s1", 1000, xavier)
	b.head("loss3/classifier", deploy, 1, "")
	return b.String()
}

// mobilenet writes MobileNet v1 (Howard et al. 2017, width 1.0): a 3x3
// stem, thirteen depthwise separable blocks (a 3x3 convolution with group
// equal to its channels, then a 1x1), each convolution followed by
// BatchNorm + Scale + ReLU.
func mobilenet(deploy bool) string {
	var b netText
	b.f("# MobileNet v1 (Howard et al. 2017, width 1.0) for 224x224 ImageNet crops:\n# depthwise convolutions are Convolution layers with group == channels.\n# Written by models/gen_test.go.\nname: \"MobileNet\"\n")
	if deploy {
		b.deployInput(1, 224)
	} else {
		b.imagenetData(224, 32, 25)
	}
	unit := func(name, bottom string, out, kernel, stride, group int) {
		b.conv(name, bottom, out, kernel, stride, kernel/2, group, false, msra)
		b.bnScale(name+"/bn", name+"/scale", name)
		b.relu(name+"/relu", name)
	}
	unit("conv1", "data", 32, 3, 2, 1)
	in, ch := "conv1", 32
	for i, blk := range []struct{ out, stride int }{{64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2},
		{512, 1}, {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}} {
		dw, pw := fmt.Sprintf("conv%d_dw", i+2), fmt.Sprintf("conv%d_pw", i+2)
		unit(dw, in, ch, 3, blk.stride, ch)
		unit(pw, dw, blk.out, 1, 1, 1)
		in, ch = pw, blk.out
	}
	b.pool("pool6", in, "AVE", 7, 1, 0)
	b.fc("fc7", "pool6", 1000, msra)
	b.head("fc7", deploy, 1, "")
	return b.String()
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
	return map[string]string{
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
