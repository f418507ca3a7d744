package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// sgemmShapes are the products gocaffe runs: 512^3, and the GEMMs of the
// side-by-side nets' layers (../shared/caffe: LeNet at batch 64, CIFAR-10
// quick at 100, CaffeNet at 10), per image and group for convolutions
// (forward NN: weights x columns; weight gradient NT: output diff x
// columns^T; data gradient TN: weights^T x output diff) and per batch for
// inner products (forward NT: bottom x weights^T).
var sgemmShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"512x512x512", false, false, 512, 512, 512},
	{"lenet_conv1_fwd", false, false, 20, 576, 25},
	{"lenet_conv2_fwd", false, false, 50, 64, 500},
	{"lenet_conv2_dW", false, true, 50, 500, 64},
	{"lenet_conv2_dX", true, false, 500, 64, 50},
	{"lenet_ip1_fwd", false, true, 64, 500, 800},
	{"lenet_ip1_dX", false, false, 64, 800, 500},
	{"cifar_conv1_fwd", false, false, 32, 1024, 75},
	{"cifar_conv2_fwd", false, false, 32, 256, 800},
	{"cifar_conv2_dW", false, true, 32, 800, 256},
	{"cifar_conv2_dX", true, false, 800, 256, 32},
	{"cifar_conv3_fwd", false, false, 64, 64, 800},
	{"cifar_conv1_dW", false, true, 32, 75, 1024},
	{"cifar_conv2_dW_b2", false, true, 32, 800, 512},
	{"cifar_conv3_dW_b8", false, true, 64, 800, 512},
	{"resnet_res5_3x3_dX", true, false, 4608, 49, 512},
	{"caffenet_conv1_fwd", false, false, 96, 3025, 363},
	{"caffenet_conv2_fwd", false, false, 128, 729, 1200},
	{"caffenet_conv2_dW", false, true, 128, 1200, 729},
	{"caffenet_conv3_fwd", false, false, 384, 169, 2304},
	{"caffenet_conv5_fwd", false, false, 128, 169, 1728},
	{"caffenet_fc6_fwd", false, true, 10, 4096, 9216},
	{"caffenet_fc7_fwd", false, true, 10, 4096, 4096},
}

// BenchmarkSgemm reports GFLOP/s of Gemm at sgemmShapes; compare the
// default build with `-tags openblas` (and GOCAFFE_GEMM=openblas for
// OpenBLAS's own products), and -cpu 1,2.
func BenchmarkSgemm(b *testing.B) { benchGemm[float32](b) }

// BenchmarkDgemm is BenchmarkSgemm in float64.
func BenchmarkDgemm(b *testing.B) { benchGemm[float64](b) }

func benchGemm[T Float](b *testing.B) {
	b.Logf("BLAS: %s", BLASName)
	for _, s := range sgemmShapes {
		b.Run(s.name, func(b *testing.B) {
			a := randSlice[T](s.m*s.k, -1, 1, 1)
			bm := randSlice[T](s.k*s.n, -1, 1, 2)
			c := make([]T, s.m*s.n)
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.transA {
				ta = blas.Trans
			}
			if s.transB {
				tb = blas.Trans
			}
			for b.Loop() {
				Gemm(ta, tb, s.m, s.n, s.k, 1, a, bm, 0, c)
			}
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			checkGemmSample(b, s.transA, s.transB, s.m, s.n, s.k, a, bm, c)
		})
	}
}

// checkGemmSample holds 64 elements of the benchmark's product C = op(A)
// op(B) (tight leading dimensions) to their dot products in float64, after
// the timing: a benchmark run is also a check of the kernels it timed,
// where nothing else can be read from it (arm64 under qemu, whose speed
// means nothing).
func checkGemmSample[T Float](b *testing.B, transA, transB bool, m, n, k int, a, bm, c []T) {
	rng := rand.New(rand.NewPCG(uint64(m), uint64(n*k)))
	for range 64 {
		i, j := rng.IntN(m), rng.IntN(n)
		var want, mag float64
		for p := range k {
			x, y := a[i*k+p], bm[p*n+j]
			if transA {
				x = a[p*m+i]
			}
			if transB {
				y = bm[j*k+p]
			}
			want += float64(x) * float64(y)
			mag += math.Abs(float64(x) * float64(y))
		}
		// float32 sums of k products: a few ulps of the magnitude per step
		// at most.
		eps := 1e-6
		if _, ok := any(c[0]).(float64); ok {
			eps = 1e-14
		}
		if got := float64(c[i*n+j]); math.Abs(got-want) > eps*mag*math.Sqrt(float64(k)) {
			b.Fatalf("C[%d][%d] = %v, want %v", i, j, got, want)
		}
	}
}

func ExampleGemm() {
	// C (2x2) = A (2x3) * B (3x2), row-major.
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 0, 1, 1, 1}
	c := make([]float32, 4)
	Gemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, b, 0, c)
	fmt.Println(c)
	// Output: [4 5 10 11]
}

// im2colShapes are the column-buffer passes of the side-by-side nets'
// convolutions, one image each.
var im2colShapes = []struct {
	name                          string
	channels, in, kernel, pad, st int
}{
	{"lenet_conv1", 1, 28, 5, 0, 1},
	{"lenet_conv2", 20, 12, 5, 0, 1},
	{"cifar_conv2", 32, 16, 5, 2, 1},
	{"caffenet_conv1", 3, 227, 11, 0, 4},
	{"caffenet_conv3", 256, 13, 3, 1, 1},
	{"googlenet_conv2_3x3", 64, 56, 3, 1, 1},
	{"googlenet_conv1", 3, 224, 7, 3, 2},
	{"resnet_res3a_branch1", 256, 56, 1, 0, 2},
}

// BenchmarkIm2col times Im2col and Col2im per image.
func BenchmarkIm2col(b *testing.B) {
	for _, s := range im2colShapes {
		out := ConvOutputSize(s.in, s.kernel, s.pad, s.st, 1)
		g := &ConvGeometry{Channels: s.channels, In: []int{s.in, s.in}, Out: []int{out, out},
			Kernel: []int{s.kernel, s.kernel}, Pad: []int{s.pad, s.pad}, Stride: []int{s.st, s.st}, Dilation: []int{1, 1}}
		im := randSlice[float32](s.channels*s.in*s.in, -1, 1, 1)
		col := make([]float32, g.KernelDim()*out*out)
		b.Run(s.name+"/im2col", func(b *testing.B) {
			for b.Loop() {
				Im2col(im, g, col)
			}
		})
		b.Run(s.name+"/col2im", func(b *testing.B) {
			for b.Loop() {
				Col2im(col, g, im)
			}
		})
	}
}

// BenchmarkSgemmKernel times the best float32 micro-kernel alone on one
// goroutine, its panels in the L1 cache (kc steps, as the driver calls
// it): the kernel's share of the CPU's peak, with none of packing's or
// the driver's costs.
func BenchmarkSgemmKernel(b *testing.B) {
	kern := kernelOf[float32]()
	for _, k := range []int{64, gemmKC} {
		b.Run(fmt.Sprintf("%s/%dx%dx%d", kern.name, kern.mr, kern.nr, k), func(b *testing.B) {
			a := randSlice[float32](kern.mr*k, -1, 1, 1)
			bp := randSlice[float32](kern.nr*k, -1, 1, 2)
			c := make([]float32, kern.mr*kern.nr)
			for b.Loop() {
				kern.fn(k, a, bp, c, kern.nr)
			}
			flops := 2 * float64(kern.mr*kern.nr*k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// convShapes are the products of folded convolutions at batch 1 (weights
// m x k packed once, columns k x n, bias and ReLU in the epilogue):
// CaffeNet's (conv2 a group's), GoogLeNet's, ResNet-50's, MobileNet v1's
// and MobileNet-SSD's.
var convShapes = []struct {
	name    string
	m, n, k int
}{
	{"caffenet_conv1", 96, 3025, 363},
	{"caffenet_conv2_group", 128, 729, 1200},
	{"googlenet_conv1", 64, 12544, 147},
	{"googlenet_conv2_3x3", 192, 3136, 576},
	{"googlenet_3a_1x1", 64, 784, 192},
	{"googlenet_3b_3x3", 192, 784, 1152},
	{"googlenet_4e_3x3", 320, 196, 1440},
	{"googlenet_4a_1x1", 192, 196, 480},
	{"googlenet_5a_1x1", 256, 49, 832},
	{"resnet_res2_3x3", 64, 3136, 576},
	{"resnet_res2_1x1_up", 256, 3136, 64},
	{"resnet_res5_3x3", 512, 49, 4608},
	{"mobilenet_pw2", 64, 12544, 32},
	{"mobilenet_pw13", 1024, 49, 1024},
	{"ssd_conv13_mbox_conf", 126, 100, 9216},
	{"ssd_conv14_2", 512, 25, 2304},
	{"ssd_conv16_2", 256, 4, 1152},
}

// BenchmarkConvGemm reports GFLOP/s of GemmPackedEpilogue at convShapes,
// on GOMAXPROCS goroutines (as a batch of one runs them).
func BenchmarkConvGemm(b *testing.B) {
	for _, s := range convShapes {
		b.Run(s.name, func(b *testing.B) {
			w := randSlice[float32](s.m*s.k, -1, 1, 1)
			cols := randSlice[float32](s.k*s.n, -1, 1, 2)
			c := make([]float32, s.m*s.n)
			ep := &Epilogue[float32]{RowBias: randSlice[float32](s.m, -1, 1, 3), ReLU: true}
			pa := PackA(blas.NoTrans, s.m, s.k, w)
			cpu0 := processCPUSeconds()
			for b.Loop() {
				GemmPackedEpilogue(pa, blas.NoTrans, s.n, cols, c, ep, false)
			}
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := processCPUSeconds() - cpu0; cpu > 0 {
				// Per second of CPU time, all goroutines together.
				b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
			}
		})
	}
}

// ipShapes are inner products' forward passes (bottom x weights^T) of the
// deploy nets at batch 1 and 10: CaffeNet's fc6, fc7 and fc8, and the
// 1024-to-1000 classifier of GoogLeNet.
var ipShapes = []struct {
	name    string
	m, n, k int
}{
	{"caffenet_fc6_b1", 1, 4096, 9216},
	{"caffenet_fc7_b1", 1, 4096, 4096},
	{"caffenet_fc8_b1", 1, 1000, 4096},
	{"googlenet_fc_b1", 1, 1000, 1024},
	{"caffenet_fc6_b10", 10, 4096, 9216},
	{"caffenet_fc7_b10", 10, 4096, 4096},
	{"googlenet_fc_b10", 10, 1000, 1024},
}

// BenchmarkInnerProduct reports GFLOP/s and the weights' GB/s of
// GemmEpilogue at ipShapes (bias and ReLU in the epilogue), on GOMAXPROCS
// goroutines.
func BenchmarkInnerProduct(b *testing.B) {
	for _, s := range ipShapes {
		b.Run(s.name, func(b *testing.B) {
			x := randSlice[float32](s.m*s.k, -1, 1, 1)
			w := randSlice[float32](s.n*s.k, -1, 1, 2)
			y := make([]float32, s.m*s.n)
			ep := &Epilogue[float32]{ColBias: randSlice[float32](s.n, -1, 1, 3), ReLU: true}
			for b.Loop() {
				GemmEpilogue(blas.NoTrans, blas.Trans, s.m, s.n, s.k, 1, x, w, 0, y, ep)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/sec/1e9, "GFLOP/s")
			b.ReportMetric(4*float64(s.n*s.k)*float64(b.N)/sec/1e9, "GB/s")
		})
	}
}

// panelShapes are folded convolutions at batch 1 whose products read
// their columns from a padded image (GemmConv): CaffeNet's conv1 (stride
// 4) and a group of its conv2, GoogLeNet's conv1 (stride 2) and 5x5
// layers.
var panelShapes = []struct {
	name                         string
	cin, h, cout, k, pad, stride int
}{
	{"googlenet_conv1", 3, 224, 64, 7, 3, 2},
	{"caffenet_conv1", 3, 227, 96, 11, 0, 4},
	{"caffenet_conv2_group", 48, 27, 128, 5, 2, 1},
	{"googlenet_3a_5x5", 16, 28, 32, 5, 2, 1},
	{"googlenet_3b_5x5", 32, 28, 96, 5, 2, 1},
	{"googlenet_4e_5x5", 32, 14, 128, 5, 2, 1},
	{"googlenet_5b_5x5", 48, 7, 128, 5, 2, 1},
}

// BenchmarkConvPanels reports GFLOP/s of a batch-1 convolution's product
// (bias and ReLU in the epilogue) both ways, on GOMAXPROCS goroutines:
// im2col, then GemmPackedEpilogue of its columns, against GemmConvParallel
// from the padded image.
func BenchmarkConvPanels(b *testing.B) {
	for _, s := range panelShapes {
		out := ConvOutputSize(s.h, s.k, s.pad, s.stride, 1)
		g := ConvGeometry{Channels: s.cin, In: []int{s.h, s.h}, Out: []int{out, out},
			Kernel: []int{s.k, s.k}, Pad: []int{s.pad, s.pad}, Stride: []int{s.stride, s.stride}, Dilation: []int{1, 1}}
		x := randSlice[float32](g.ImSize(), -1, 1, 1)
		pa := PackA(blas.NoTrans, s.cout, g.KernelDim(), randSlice[float32](s.cout*g.KernelDim(), -1, 1, 2))
		c := make([]float32, s.cout*out*out)
		ep := &Epilogue[float32]{RowBias: randSlice[float32](s.cout, -1, 1, 3), ReLU: true}
		flops := 2 * float64(s.cout) * float64(out*out) * float64(g.KernelDim())
		b.Run(s.name+"/im2col", func(b *testing.B) {
			col := make([]float32, g.ColSize())
			for b.Loop() {
				Im2col(x, &g, col)
				GemmPackedEpilogue(pa, blas.NoTrans, out*out, col, c, ep, false)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(s.name+"/panels", func(b *testing.B) {
			var p ConvPanels[float32]
			buf := make([]float32, ConvPanelsSize(&g, 1))
			for b.Loop() {
				p.Reset(&g, 1, buf)
				p.SetImage(0, x)
				GemmConvParallel(pa, &p, c, ep)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
