//go:build cuda

package cuda_test

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// convShape is one convolution of a benchmarked net: batch n, c input and
// k output channels, an hw square input, an r square kernel.
type convShape struct {
	name                   string
	n, c, hw, k, r, s, pad int
}

// resnet50Convs are ResNet-50's convolutions at batch 64 that carry most
// of its time; tools/gpu/conv_shapes.py times the same in PyTorch.
var resnet50Convs = []convShape{
	{"conv1_7x7s2_3-64_224", 64, 3, 224, 64, 7, 2, 3},
	{"3x3_64_56", 64, 64, 56, 64, 3, 1, 1},
	{"1x1_64-256_56", 64, 64, 56, 256, 1, 1, 0},
	{"1x1_256-64_56", 64, 256, 56, 64, 1, 1, 0},
	{"3x3_128_28", 64, 128, 28, 128, 3, 1, 1},
	{"3x3_256_14", 64, 256, 14, 256, 3, 1, 1},
	{"1x1_1024-256_14", 64, 1024, 14, 256, 1, 1, 0},
	{"3x3_512_7", 64, 512, 7, 512, 3, 1, 1},
	// First layers with their 3 input channels padded to 4 (tensor cores
	// want a multiple of 4), and CaffeNet's conv1 at batch 256.
	{"conv1_7x7s2_4-64_224", 64, 4, 224, 64, 7, 2, 3},
	{"caffenet_conv1_11x11s4_3-96_227", 256, 3, 227, 96, 11, 4, 0},
	{"caffenet_conv1_11x11s4_4-96_227", 256, 4, 227, 96, 11, 4, 0},
}

// BenchmarkConvResNet50 times cuDNN's three convolution passes through the
// binding on ResNet-50's shapes with the algorithm cudnnFind chooses
// (strict FP32, then TF32; workspace up to 1 GiB), reporting the algorithm: the
// weight gradient with beta 1 as Caffe accumulates it and with beta 0.
func BenchmarkConvResNet50(b *testing.B) {
	for _, tf32 := range []bool{false, true} {
		name := "fp32"
		if tf32 {
			name = "tf32"
		}
		b.Run(name, func(b *testing.B) { benchConvResNet50(b, tf32) })
	}
}

func benchConvResNet50(b *testing.B, tf32 bool) {
	d := cudatest.Device(b)
	dnn, err := d.DNN()
	if err != nil {
		b.Skip(err)
	}
	const wsBytes = 1 << 30
	ws := cudatest.Alloc(b, d, wsBytes)
	for _, s := range resnet50Convs {
		out := (s.hw+2*s.pad-s.r)/s.s + 1
		xs, ys, wsh := []int{s.n, s.c, s.hw, s.hw}, []int{s.n, s.k, out, out}, []int{s.k, s.c, s.r, s.r}
		xd, _ := cuda.NewTensorDesc(cuda.DNNFloat, xs)
		yd, _ := cuda.NewTensorDesc(cuda.DNNFloat, ys)
		wd, _ := cuda.NewFilterDesc(cuda.DNNFloat, wsh)
		cd, err := cuda.NewConvDesc(cuda.DNNFloat, []int{s.pad, s.pad}, []int{s.s, s.s}, []int{1, 1}, 1, tf32)
		if err != nil {
			b.Fatal(err)
		}
		count := func(v []int) int { return v[0] * v[1] * v[2] * v[3] }
		fill := func(n int) cuda.DevicePtr {
			p := cudatest.Alloc(b, d, n*4)
			host := make([]float32, n)
			for i := range host {
				host[i] = float32((i*2654435761)%1000)/1000 - 0.5
			}
			d.CopyHtoD(p, f32bytes(host))
			return p
		}
		x, y, w := fill(count(xs)), fill(count(ys)), fill(count(wsh))
		dx, dw := fill(count(xs)), fill(count(wsh))
		passes := []struct {
			name string
			beta float64
			find func() (cuda.ConvAlgo, error)
			run  func(a cuda.ConvAlgo, beta float64) error
		}{
			{"fwd", 0, func() (cuda.ConvAlgo, error) { return dnn.ConvFind(0, xd, x, wd, w, cd, yd, y, ws, wsBytes, tf32) },
				func(a cuda.ConvAlgo, beta float64) error {
					return dnn.ConvForward(1, xd, x, wd, w, cd, a, ws, beta, yd, y)
				}},
			{"bwd_data", 0, func() (cuda.ConvAlgo, error) { return dnn.ConvFind(1, xd, dx, wd, w, cd, yd, y, ws, wsBytes, tf32) },
				func(a cuda.ConvAlgo, beta float64) error {
					return dnn.ConvBackwardData(1, wd, w, yd, y, cd, a, ws, beta, xd, dx)
				}},
			{"bwd_filter_beta1", 1, func() (cuda.ConvAlgo, error) { return dnn.ConvFind(2, xd, x, wd, dw, cd, yd, y, ws, wsBytes, tf32) },
				func(a cuda.ConvAlgo, beta float64) error {
					return dnn.ConvBackwardFilter(1, xd, x, yd, y, cd, a, ws, beta, wd, dw)
				}},
			{"bwd_filter_beta0", 0, func() (cuda.ConvAlgo, error) { return dnn.ConvFind(2, xd, x, wd, dw, cd, yd, y, ws, wsBytes, tf32) },
				func(a cuda.ConvAlgo, beta float64) error {
					return dnn.ConvBackwardFilter(1, xd, x, yd, y, cd, a, ws, beta, wd, dw)
				}},
		}
		if s.r == 1 && s.s == 1 && s.pad == 0 {
			bl, err := d.Blas()
			if err != nil {
				b.Fatal(err)
			}
			bl.SetTF32(tf32)
			defer bl.SetTF32(false)
			hw := s.hw * s.hw
			ones := fill(s.n)
			d.CopyHtoD(ones, f32bytes(onesF32(s.n)))
			gemm := func(name string, f func() error) {
				b.Run(fmt.Sprintf("%s/%s/cublas", s.name, name), func(b *testing.B) {
					timeGPU(b, d, f)
				})
			}
			gemm("fwd", func() error {
				return bl.SgemmStridedBatched(cuda.NoTrans, cuda.NoTrans, hw, s.k, s.c, 1, x, hw, s.c*hw, w, s.c, 0, 0, y, hw, s.k*hw, s.n)
			})
			gemm("bwd_data", func() error {
				return bl.SgemmStridedBatched(cuda.NoTrans, cuda.Trans, hw, s.c, s.k, 1, y, hw, s.k*hw, w, s.c, 0, 0, dx, hw, s.c*hw, s.n)
			})
			gemm("bwd_filter", func() error {
				if err := bl.SgemmStridedBatched(cuda.Trans, cuda.NoTrans, s.c, s.k, hw, 1, x, hw, s.c*hw, y, hw, s.k*hw, 0, ws, s.c, s.c*s.k, s.n); err != nil {
					return err
				}
				return bl.Sgemv(cuda.NoTrans, s.c*s.k, s.n, 1, ws, s.c*s.k, ones, 1, 1, dw, 1)
			})
		}
		bd, _ := cuda.NewTensorDesc(cuda.DNNFloat, []int{1, s.k, 1, 1})
		db := fill(s.k)
		b.Run(fmt.Sprintf("%s/bwd_bias/cudnn", s.name), func(b *testing.B) {
			timeGPU(b, d, func() error { return dnn.ConvBackwardBias(1, yd, y, 1, bd, db) })
		})
		for _, p := range passes {
			a, err := p.find()
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s/algo%d", s.name, p.name, a.Algo), func(b *testing.B) {
				timeGPU(b, d, func() error { return p.run(a, p.beta) })
			})
		}
	}
}

// timeGPU reports f's device time per call, from events on the stream.
func timeGPU(b *testing.B, d *cuda.Device, f func() error) {
	b.ReportMetric(gpuMillis(b, d, f), "ms/op-gpu")
}

// gpuMillis runs f three times to warm up, then b.N times between events
// on the device's stream, and returns the device milliseconds per call.
func gpuMillis(b *testing.B, d *cuda.Device, f func() error) float64 {
	for range 3 {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()
	start.Record(d.Stream())
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	end.Record(d.Stream())
	end.Synchronize()
	ms, _ := cuda.ElapsedMillis(start, end)
	return float64(ms) / float64(b.N)
}

func onesF32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
