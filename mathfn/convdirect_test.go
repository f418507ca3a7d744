package mathfn

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// GemmConvDirect against GemmConv on the same packed weights and padded
// images: the same products bit for bit, over rows of one and two vectors
// (and images of an odd number of 16-position runs), several images,
// blocks of k and of rows (12-, 8- and other-row panels), pads, a
// dilation and strides.
func TestGemmConvDirect(t *testing.T) {
	if !hasConvDirect {
		t.Skip("no kernel")
	}
	var p ConvPanels[float32]
	for _, s := range []struct {
		m, c, h, w, k, pad, stride, dil, images int
	}{
		{32, 32, 16, 16, 5, 2, 1, 1, 1}, // CIFAR-10 quick's conv2: 12 + 12 + 8 rows
		{32, 3, 32, 32, 5, 2, 1, 1, 2},  // conv1: runs of a row
		{32, 32, 16, 16, 5, 2, 1, 1, 2}, // conv2's bottom gradient shape, two images
		{7, 5, 9, 16, 3, 1, 1, 1, 3},    // 9 rows of 16: a half tile at each image's end; 7 rows
		{250, 20, 7, 16, 3, 1, 1, 1, 1}, // a second block of rows (240 + 10) and of k
		{20, 3, 12, 32, 3, 2, 1, 2, 2},  // dilated: 32 positions a row
		{13, 4, 11, 63, 3, 1, 2, 1, 2},  // stride 2: a row's positions in phases
		{64, 32, 8, 8, 5, 2, 1, 1, 3},   // conv3: rows of 8 in pairs, 12-row panels and a 4-row one
		{32, 64, 8, 8, 5, 2, 1, 1, 2},   // conv3's bottom gradient
		{9, 3, 6, 8, 3, 1, 1, 1, 2},     // 6 rows of 8: a half tile at each image's end
	} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			g := &ConvGeometry{Channels: s.c, In: []int{s.h, s.w}, Kernel: []int{s.k, s.k}, Pad: []int{s.pad, s.pad},
				Stride: []int{s.stride, s.stride}, Dilation: []int{s.dil, s.dil}}
			g.Out = []int{ConvOutputSize(s.h, s.k, s.pad, s.stride, s.dil), ConvOutputSize(s.w, s.k, s.pad, s.stride, s.dil)}
			if g.Out[1]%16 != 0 && g.Out[1] != 8 {
				t.Fatalf("output rows of %d positions", g.Out[1])
			}
			kd := g.KernelDim()
			n := s.images * prod(g.Out)
			pa := PackA(blas.NoTrans, s.m, kd, randSlice[float32](s.m*kd, -1, 1, 1))
			im := randSlice[float32](s.images*g.ImSize(), -1, 1, 2)
			p.Reset(g, s.images, make([]float32, ConvPanelsSize(g, s.images)))
			for j := range s.images {
				p.SetImage(j, im[j*g.ImSize():])
			}
			want, got := make([]float32, s.m*n), make([]float32, s.m*n)
			GemmConv(pa, &p, want, nil)
			for i := range got {
				got[i] = float32(math.NaN()) // written, not added to
			}
			if !GemmConvDirect(pa, &p, got) {
				t.Fatal("not run")
			}
			sameBits(t, "C", got, want)
		})
	}
	// Not taken: an odd number of output rows of 8 positions.
	g := &ConvGeometry{Channels: 2, In: []int{7, 8}, Out: []int{7, 8}, Kernel: []int{3, 3}, Pad: []int{1, 1}, Stride: []int{1, 1}, Dilation: []int{1, 1}}
	p.Reset(g, 1, make([]float32, ConvPanelsSize(g, 1)))
	if GemmConvDirect(PackA(blas.NoTrans, 4, 18, make([]float32, 4*18)), &p, make([]float32, 4*56)) {
		t.Error("7 output rows of 8 positions taken")
	}
}

// BenchmarkConvDirect reports GFLOP/s of a convolution's product both
// ways, GemmConv (packed panels) and GemmConvDirect, on the calling
// goroutine: CIFAR-10 quick's conv1 and conv2 (one image), conv2's
// bottom gradient (two images) and conv3 (eight).
func BenchmarkConvDirect(b *testing.B) {
	for _, s := range []struct{ m, c, h, images int }{{32, 3, 32, 1}, {32, 32, 16, 1}, {32, 32, 16, 2}, {64, 32, 8, 8}} {
		g := &ConvGeometry{Channels: s.c, In: []int{s.h, s.h}, Out: []int{s.h, s.h}, Kernel: []int{5, 5}, Pad: []int{2, 2}, Stride: []int{1, 1}, Dilation: []int{1, 1}}
		var p ConvPanels[float32]
		p.Reset(g, s.images, make([]float32, ConvPanelsSize(g, s.images)))
		im := randSlice[float32](s.images*g.ImSize(), -1, 1, 2)
		for j := range s.images {
			p.SetImage(j, im[j*g.ImSize():])
		}
		kd, n := g.KernelDim(), s.images*s.h*s.h
		pa := PackA(blas.NoTrans, s.m, kd, randSlice[float32](s.m*kd, -1, 1, 1))
		c := make([]float32, s.m*n)
		flops := 2 * float64(s.m*n*kd)
		b.Run(fmt.Sprint("panels", s), func(b *testing.B) {
			for b.Loop() {
				GemmConv(pa, &p, c, nil)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprint("direct", s), func(b *testing.B) {
			for b.Loop() {
				GemmConvDirect(pa, &p, c)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
