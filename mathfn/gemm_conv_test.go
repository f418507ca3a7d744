package mathfn

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// GemmConv against im2col's columns multiplied by GemmPackedEpilogue: the
// same panels, so the same products bit for bit, over strides, pads,
// dilations, several images side by side, partial panels and blocks of k.
func TestGemmConvMatchesIm2col(t *testing.T) {
	testGemmConv[float32](t)
	testGemmConv[float64](t)
}

func testGemmConv[T Float](t *testing.T) {
	var p ConvPanels[T] // one for all the shapes: what it keeps must follow
	for _, s := range []struct {
		m, c, h, w, k, pad, stride, dil, images int
	}{
		{32, 32, 16, 16, 5, 2, 1, 1, 1}, // CIFAR-10 quick's conv2
		{64, 32, 8, 8, 5, 2, 1, 1, 3},   // conv3, images side by side
		{32, 3, 32, 32, 5, 2, 1, 1, 1},  // conv1
		{7, 5, 9, 11, 3, 1, 1, 1, 2},
		{13, 4, 10, 7, 3, 0, 2, 1, 2},
		{5, 3, 12, 12, 3, 2, 1, 2, 1},
		{250, 20, 7, 7, 3, 1, 1, 1, 2}, // a second block of rows and of k
		{6, 2, 15, 13, 7, 3, 3, 1, 1},
		{3, 4, 9, 9, 3, 1, 1, 1, 30}, // 2430 positions: several blocks of k
		{20, 3, 40, 70, 3, 1, 1, 1, 1},
		{64, 3, 45, 45, 7, 3, 2, 1, 1},  // GoogLeNet's conv1, smaller: stride 2 in phases
		{96, 3, 47, 47, 11, 0, 4, 1, 2}, // CaffeNet's conv1, smaller: stride 4, no pad
		{9, 5, 17, 19, 3, 2, 3, 2, 2},   // stride and dilation, phases of unequal lengths
		{11, 2, 13, 9, 5, 1, 5, 1, 1},   // a stride as large as the kernel
	} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			g := &ConvGeometry{Channels: s.c, In: []int{s.h, s.w}, Kernel: []int{s.k, s.k}, Pad: []int{s.pad, s.pad},
				Stride: []int{s.stride, s.stride}, Dilation: []int{s.dil, s.dil}}
			g.Out = []int{ConvOutputSize(s.h, s.k, s.pad, s.stride, s.dil), ConvOutputSize(s.w, s.k, s.pad, s.stride, s.dil)}
			kd, hw := g.KernelDim(), prod(g.Out)
			n := s.images * hw
			w := randSlice[T](s.m*kd, -1, 1, 1)
			im := randSlice[T](s.images*g.ImSize(), -1, 1, 2)
			col := make([]T, kd*n)
			for j := range s.images {
				Im2colLD(im[j*g.ImSize():], g, col[j*hw:], n)
			}
			pa := PackA(blas.NoTrans, s.m, kd, w)
			want := make([]T, s.m*n)
			GemmPackedEpilogue(pa, blas.NoTrans, n, col, want, nil, true)
			p.Reset(g, s.images, make([]T, ConvPanelsSize(g, s.images)))
			for j := range s.images {
				p.SetImage(j, im[j*g.ImSize():])
			}
			got := make([]T, s.m*n)
			for i := range got {
				got[i] = T(math.NaN()) // written, not added to
			}
			if !ConvPanelsOK[T](g) {
				t.Skip("not our own GEMM")
			}
			GemmConv(pa, &p, got, nil)
			sameBits(t, "C", got, want)
			// On several goroutines, with an epilogue: the same tiles.
			ep := &Epilogue[T]{RowBias: randSlice[T](s.m, -1, 1, 5), ReLU: true}
			wantEp, gotEp := make([]T, s.m*n), make([]T, s.m*n)
			GemmPackedEpilogue(pa, blas.NoTrans, n, col, wantEp, ep, false)
			GemmConvParallel(pa, &p, gotEp, ep)
			sameBits(t, "C (parallel)", gotEp, wantEp)
			if !TapsOK[T](g) {
				return
			}
			// The weight gradient's product: dW += dy * col^T.
			dy := randSlice[T](s.m*n, -1, 1, 3)
			wantW, gotW := randSlice[T](s.m*kd, -1, 1, 4), randSlice[T](s.m*kd, -1, 1, 4)
			GemmSerial(blas.NoTrans, blas.Trans, s.m, kd, n, 1, dy, col, 1, wantW)
			GemmConvTaps(s.m, dy, n, &p, gotW)
			if kernelOf[T]().dot != nil && s.m <= dotRows && n >= dotMinK {
				// The reference ran on dot kernels: other sums.
				for i := range wantW {
					if d := math.Abs(float64(gotW[i] - wantW[i])); d > 1e-4*math.Max(1, math.Abs(float64(wantW[i]))) {
						t.Fatalf("dW[%d] = %v, want %v", i, gotW[i], wantW[i])
					}
				}
				return
			}
			sameBits(t, "dW", gotW, wantW)
		})
	}
}

// sameBits fails the test unless got and want are equal value by value.
func sameBits[T Float](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
