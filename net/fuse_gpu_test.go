package net_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/settings"
)

// fusedNet is a training net with ResNet's BatchNorm-Scale pattern, the
// Scale in place on the BatchNorm's top; bnTop is that top's name (the
// bottom's for an in-place BatchNorm).
func fusedNet(bnTop string) string {
	return fmt.Sprintf(`name: "fused" force_backward: true
layer { name: "data" type: "Input" top: "data" top: "target" input_param { shape { dim: 4 dim: 3 dim: 5 dim: 5 } shape { dim: 4 dim: 3 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 6 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "%[1]s" }
layer { name: "scale" type: "Scale" bottom: "%[1]s" top: "%[1]s"
  scale_param { bias_term: true filler { type: "gaussian" mean: 1 std: 0.2 } bias_filler { type: "gaussian" std: 0.2 } } }
layer { name: "relu" type: "ReLU" bottom: "%[1]s" top: "%[1]s" }
layer { name: "ip" type: "InnerProduct" bottom: "%[1]s" top: "ip" inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
`, bnTop)
}

// TestFusedBatchNormScaleGPU trains the BatchNorm-Scale-ReLU chain fused
// on the GPU and on the CPU (whose fused passes give the separate layers'
// values bit for bit: TestFusedBatchNormScaleHost), and compares every blob,
// every gradient and the BatchNorm's running statistics over two
// iterations. It does so on the own BatchNorm kernels (which fuse the
// ReLU too where the whole chain is in place) and on cuDNN's
// (the BatchNorm setting, GOCAFFE_BN), and on the own kernels also with global statistics (a
// frozen BatchNorm being fine-tuned, its running sums set first), with a
// leaky ReLU, with a ReLU right after the BatchNorm, and with a negative
// slope, which is not fused; with 128 channels, which take the kernels of
// a block per channel, and on the row kernels alone (GOCAFFE_BN=rows).
func TestFusedBatchNormScaleGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	edit := editNet
	plain := fusedNet("conv")
	cases := []struct {
		mode, name, text string
		fused            []string // the log's "a computes b too (fused)" pairs
	}{
		{"own", "top_conv", plain, []string{"bn computes scale", "scale computes relu"}},
		{"own", "top_bn", fusedNet("bn"), []string{"bn computes scale"}},
		{"cudnn", "top_conv", plain, []string{"bn computes scale"}},
		{"cudnn", "top_bn", fusedNet("bn"), []string{"bn computes scale"}},
		{"own", "global", edit(t, plain, `type: "BatchNorm" bottom: "conv" top: "conv" }`,
			`type: "BatchNorm" bottom: "conv" top: "conv" batch_norm_param { use_global_stats: true } }`),
			[]string{"bn computes scale", "scale computes relu"}},
		{"own", "leaky", edit(t, plain, `type: "ReLU" bottom: "conv" top: "conv" }`,
			`type: "ReLU" bottom: "conv" top: "conv" relu_param { negative_slope: 0.1 } }`),
			[]string{"bn computes scale", "scale computes relu"}},
		{"own", "blocks", edit(t, plain, `num_output: 6 kernel_size: 3`, `num_output: 128 kernel_size: 3`),
			[]string{"bn computes scale", "scale computes relu"}},
		{"rows", "top_conv", plain, []string{"bn computes scale", "scale computes relu"}},
		{"own", "no_scale", edit(t, plain, `layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
  scale_param { bias_term: true filler { type: "gaussian" mean: 1 std: 0.2 } bias_filler { type: "gaussian" std: 0.2 } } }`, ``), []string{"bn computes relu"}},
		{"own", "negative_slope", edit(t, plain, `type: "ReLU" bottom: "conv" top: "conv" }`,
			`type: "ReLU" bottom: "conv" top: "conv" relu_param { negative_slope: -0.5 } }`),
			[]string{"bn computes scale"}},
	}
	for _, c := range cases {
		s, err := settings.FromLookup(func(name string) (string, bool) { return c.mode, name == "GOCAFFE_BN" })
		if err != nil {
			t.Fatal(err)
		}
		ctx.SetSettings(s)
		name := c.mode + "/" + c.name
		t.Run("float32/"+name, func(t *testing.T) { checkFused[float32](t, ctx, c.text, c.fused, 1e-3) })
		t.Run("float64/"+name, func(t *testing.T) { checkFused[float64](t, ctx, c.text, c.fused, 1e-9) })
	}
}

// residualNet is ResNet's residual addition, two convolutions summed by
// an Eltwise (eltwise_param given by eltwise) and a ReLU in place on the
// sum (relu_param by relu); with noBackward the first bottom is an input,
// whose gradient is not wanted.
func residualNet(eltwise, relu string, noBackward bool) string {
	first, force := "a", "force_backward: true"
	if noBackward {
		first, force = "skip", ""
	}
	return fmt.Sprintf(`name: "residual" %[4]s
layer { name: "data" type: "Input" top: "data" top: "skip" top: "target"
  input_param { shape { dim: 4 dim: 3 dim: 5 dim: 5 } shape { dim: 4 dim: 6 dim: 5 dim: 5 } shape { dim: 4 dim: 3 } } }
layer { name: "a" type: "Convolution" bottom: "data" top: "a"
  convolution_param { num_output: 6 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "b" type: "Convolution" bottom: "data" top: "b"
  convolution_param { num_output: 6 kernel_size: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "sum" type: "Eltwise" bottom: "%[3]s" bottom: "b" top: "sum" %[1]s }
layer { name: "relu" type: "ReLU" bottom: "sum" top: "sum" %[2]s }
layer { name: "ip" type: "InnerProduct" bottom: "sum" top: "ip" inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
`, eltwise, relu, first, force)
}

// TestFusedEltwiseReLUGPU trains a residual addition with its ReLU fused
// on the GPU against the separate layers on the CPU (every blob's data and
// diff, the sum's diff being the ReLU's masked one as in Caffe): plain,
// with coefficients and a leaky (or negative) slope, with one bottom that
// wants no gradient, and not fused with three bottoms.
func TestFusedEltwiseReLUGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	fused := []string{"sum computes relu"}
	three := strings.Replace(residualNet("", "", false), `bottom: "a" bottom: "b" top: "sum"`, `bottom: "a" bottom: "b" bottom: "a" top: "sum"`, 1)
	cases := []struct {
		name, text string
		fused      []string
	}{
		{"plain", residualNet("", "", false), fused},
		{"coeffs_leaky", residualNet("eltwise_param { coeff: 1.5 coeff: -0.5 }", "relu_param { negative_slope: 0.2 }", false), fused},
		{"negative_slope", residualNet("", "relu_param { negative_slope: -0.3 }", false), fused},
		{"one_bottom_without_gradient", residualNet("", "", true), fused},
		{"three_bottoms", three, nil},
	}
	// 1e-3 in float32, as the BatchNorm test: the convolutions' cuDNN
	// algorithms are timed and differ by GPU (an H200 chose one whose
	// weight gradient was 2e-4 off the host's in one element), which a
	// wrong fusion would exceed many times over.
	for _, c := range cases {
		t.Run("float32/"+c.name, func(t *testing.T) { checkFused[float32](t, ctx, c.text, c.fused, 1e-3) })
		t.Run("float64/"+c.name, func(t *testing.T) { checkFused[float64](t, ctx, c.text, c.fused, 1e-9) })
	}
}

// convReLUNet is a convolution (convolution_param's extra fields given by
// conv, its params by params) and a ReLU in place on its top (relu_param
// by relu); force says whether the net runs its backward pass regardless.
func convReLUNet(conv, params, relu string, force bool) string {
	f := ""
	if force {
		f = "force_backward: true"
	}
	return fmt.Sprintf(`name: "conv_relu" %[4]s
layer { name: "data" type: "Input" top: "data" top: "target" input_param { shape { dim: 4 dim: 3 dim: 5 dim: 5 } shape { dim: 4 dim: 3 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" %[2]s
  convolution_param { num_output: 6 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } %[1]s } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" %[3]s }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip" %[2]s inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
`, conv, params, relu, f)
}

// TestFusedConvolutionReLUGPU runs a convolution whose bias addition
// applies the ReLU after it on cuDNN against the separate layers on the
// CPU: with a leaky slope, without a bias (not fused), and in a net that
// runs no backward pass (frozen weights), which fuses too.
func TestFusedConvolutionReLUGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	bias := `bias_filler { type: "gaussian" std: 0.2 }`
	frozen := `param { lr_mult: 0 } param { lr_mult: 0 }`
	fused := []string{"conv computes relu"}
	cases := []struct {
		name, text string
		fused      []string
	}{
		{"plain", convReLUNet(bias, "", "", true), fused},
		{"leaky", convReLUNet(bias, "", "relu_param { negative_slope: 0.1 }", true), fused},
		{"no_bias", convReLUNet("bias_term: false", "", "", true), nil},
		{"no_backward", convReLUNet(bias, frozen, "", false), fused},
		// debug_info logs every layer's own output: nothing is fused.
		{"debug_info", "debug_info: true\n" + convReLUNet(bias, "", "", true), nil},
	}
	for _, c := range cases {
		t.Run("float32/"+c.name, func(t *testing.T) { checkFused[float32](t, ctx, c.text, c.fused, 1e-4) })
		t.Run("float64/"+c.name, func(t *testing.T) { checkFused[float64](t, ctx, c.text, c.fused, 1e-9) })
	}
}

func checkFused[T net.Float](t *testing.T, ctx *device.Context, text string, fused []string, tol float64) {
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	cpu, err := net.New[T](p, net.Options{Seed: 3, NoMemoryReuse: true}) // every blob compared
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	rec := &logtest.Recorder{}
	gpu, err := net.New[T](p, net.Options{Seed: 3, Context: ctx, Logger: rec.Logger(), NoMemoryReuse: true})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	for _, f := range fused {
		if _, ok := rec.Find(f + " too (fused)"); !ok {
			t.Fatalf("the GPU net did not log %q", f+" too (fused)")
		}
	}
	n := 0
	for _, l := range rec.Lines() {
		if strings.Contains(l.Message, "too (fused)") {
			n++
		}
	}
	if n != len(fused) {
		t.Errorf("%d fusions logged, want %d (%v)", n, len(fused), fused)
	}
	computed := 0 // the plan's fusion pass says the same
	for _, l := range gpu.Plan().Layers {
		if l.ComputedBy != "" {
			computed++
		}
	}
	if computed != len(fused) {
		t.Errorf("the plan has %d layers computed by another, want %d:\n%s", computed, len(fused), gpu.Plan())
	}
	if bn := cpu.LayerByName("bn"); bn != nil { // running sums with a scale factor of 2
		b := bn.LayerBase().Blobs()
		for j := range b[0].Count() {
			b[0].MutableCPUData()[j] = T(j) - 1
			b[1].MutableCPUData()[j] = 1 + T(j)
		}
		b[2].MutableCPUData()[0] = 2
	}
	if err := gpu.CopyTrainedLayersFrom(cpu.ToProto(false)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"data", "target", "skip"} {
		if cpu.BlobByName(name) != nil {
			layertest.FillGaussian(cpu.BlobByName(name), 0, 1, 7)
			layertest.FillGaussian(gpu.BlobByName(name), 0, 1, 7)
		}
	}
	for iter := range 2 {
		for _, n := range []*net.Net[T]{cpu, gpu} {
			if err := n.ClearParamDiffs(); err != nil {
				t.Fatal(err)
			}
			if _, err := n.ForwardBackward(); err != nil {
				t.Fatal(err)
			}
		}
		names := cpu.BlobNames()
		for i, b := range cpu.Blobs() {
			g := gpu.Blobs()[i]
			layertest.CheckClose(t, fmt.Sprintf("iteration %d, %s data", iter, names[i]), g.CPUData(), b.CPUData(), tol)
			layertest.CheckClose(t, fmt.Sprintf("iteration %d, %s diff", iter, names[i]), g.CPUDiff(), b.CPUDiff(), tol)
		}
		pnames := cpu.ParamDisplayNames()
		for i, b := range cpu.Params() {
			g := gpu.Params()[i]
			layertest.CheckClose(t, fmt.Sprintf("iteration %d, param %s data", iter, pnames[i]), g.CPUData(), b.CPUData(), tol)
			layertest.CheckClose(t, fmt.Sprintf("iteration %d, param %s diff", iter, pnames[i]), g.CPUDiff(), b.CPUDiff(), tol)
		}
		// The next iteration starts from updated weights (plain SGD step).
		for _, n := range []*net.Net[T]{cpu, gpu} {
			for _, w := range n.LearnableParams() {
				d, x := w.CPUDiff(), w.MutableCPUData()
				for k := range x {
					x[k] -= 0.1 * d[k]
				}
			}
		}
	}
}

// TestFusedPartialPassesGPU runs ranges of layers that split fused pairs:
// each layer of a range computes its own pass and no other, as in Caffe
// (a forward pass that ends at the convolution leaves its output before
// the ReLU; one that ends at the Scale, before the ReLU), checked against
// the CPU net over the same ranges; and a backward pass that would run a
// Scale alone after a fused forward pass, whose input was never kept, is
// an error rather than a wrong gradient.
func TestFusedPartialPassesGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	ctx.SetSettings(settings.Settings{BatchNorm: settings.BatchNormOwn})
	build := func(text string, c *device.Context) *net.Net[float32] {
		p := &caffepb.NetParameter{}
		if err := protoio.ParseText([]byte(text), p); err != nil {
			t.Fatal(err)
		}
		n, err := net.New[float32](p, net.Options{Seed: 3, Context: c, NoMemoryReuse: true}) // every blob compared
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	index := func(n *net.Net[float32], name string) int {
		for i, l := range n.LayerNames() {
			if l == name {
				return i
			}
		}
		t.Fatalf("no layer %q", name)
		return -1
	}
	bias := `bias_filler { type: "gaussian" std: 0.2 }`
	for _, c := range []struct {
		text, end, blob string
	}{
		{convReLUNet(bias, "", "", true), "conv", "conv"},
		{fusedNet("conv"), "bn", "conv"},
		{fusedNet("conv"), "scale", "conv"},
		{fusedNet("conv"), "relu", "conv"},
	} {
		cpu, gpu := build(c.text, nil), build(c.text, ctx)
		if err := gpu.CopyTrainedLayersFrom(cpu.ToProto(false)); err != nil {
			t.Fatal(err)
		}
		for _, n := range []*net.Net[float32]{cpu, gpu} {
			layertest.FillGaussian(n.BlobByName("data"), 0, 1, 7)
			if _, err := n.ForwardFromTo(0, index(n, c.end)); err != nil {
				t.Fatal(err)
			}
		}
		layertest.CheckClose(t, fmt.Sprintf("%s after a forward pass to %s", c.blob, c.end), gpu.BlobByName(c.blob).CPUData(), cpu.BlobByName(c.blob).CPUData(), 1e-3)
	}
	gpu := build(fusedNet("conv"), ctx)
	layertest.FillGaussian(gpu.BlobByName("data"), 0, 1, 7)
	if _, err := gpu.Forward(); err != nil {
		t.Fatal(err)
	}
	scale := index(gpu, "scale")
	if err := gpu.BackwardFromTo(scale, scale); err == nil || !strings.Contains(err.Error(), "fused") {
		t.Errorf("a backward pass of the Scale alone after a fused forward pass: error %v, want one saying it was fused", err)
	}
	if err := gpu.Backward(); err != nil {
		t.Errorf("the whole backward pass after it: %v", err)
	}
}
