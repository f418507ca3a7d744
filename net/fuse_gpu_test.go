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

// TestFusedBatchNormScaleGPU trains the BatchNorm-Scale pair fused on the
// GPU (cuDNN) and as two layers on the CPU, and compares every blob, every
// gradient and the BatchNorm's running statistics over two iterations.
// It does so on the own BatchNorm kernels and on cuDNN's (GOCAFFE_BN), and
// on the own kernels also with global statistics (a frozen BatchNorm
// being fine-tuned), whose running sums are set first.
func TestFusedBatchNormScaleGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	for _, mode := range []string{"own", "cudnn"} {
		t.Setenv("GOCAFFE_BN", mode)
		for _, bnTop := range []string{"conv", "bn"} {
			name := mode + "/top_" + bnTop
			t.Run("float32/"+name, func(t *testing.T) { checkFused[float32](t, ctx, fusedNet(bnTop), 1e-3) })
			t.Run("float64/"+name, func(t *testing.T) { checkFused[float64](t, ctx, fusedNet(bnTop), 1e-9) })
		}
	}
	t.Setenv("GOCAFFE_BN", "own")
	global := strings.Replace(fusedNet("conv"), `type: "BatchNorm" bottom: "conv" top: "conv" }`,
		`type: "BatchNorm" bottom: "conv" top: "conv" batch_norm_param { use_global_stats: true } }`, 1)
	if global == fusedNet("conv") {
		t.Fatal("the global statistics net is the plain one")
	}
	t.Run("float32/own/global", func(t *testing.T) { checkFused[float32](t, ctx, global, 1e-3) })
	t.Run("float64/own/global", func(t *testing.T) { checkFused[float64](t, ctx, global, 1e-9) })
}

func checkFused[T net.Float](t *testing.T, ctx *device.Context, text string, tol float64) {
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	cpu, err := net.New[T](p, net.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	rec := &logtest.Recorder{}
	gpu, err := net.New[T](p, net.Options{Seed: 3, Context: ctx, Logger: rec.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	if _, ok := rec.Find("bn computes scale too (fused)"); !ok {
		t.Fatal("the GPU net did not fuse bn and scale")
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
	for _, name := range []string{"data", "target"} {
		layertest.FillGaussian(cpu.BlobByName(name), 0, 1, 7)
		layertest.FillGaussian(gpu.BlobByName(name), 0, 1, 7)
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
