package mathfn

import (
	"fmt"
	"math"
	"testing"
)

// GemmConvTapsDot against a plain loop over im2col's columns, in float64:
// dW += dy * col^T within float32 rounding of sums of a few thousand
// products, over pads, a dilation, a vertical stride, several images,
// rows of one and two vectors, and a last block of fewer taps; it leaves
// alone what it does not take.
func TestGemmConvTapsDot(t *testing.T) {
	if !hasConvTapsDot {
		t.Skip("no kernel")
	}
	var p ConvPanels[float32]
	for _, s := range []struct {
		m, c, h, w, k, pad, strideH, dil, images int
	}{
		{32, 32, 16, 16, 5, 2, 1, 1, 2}, // CIFAR-10 quick's conv2, batched
		{32, 3, 32, 32, 5, 2, 1, 1, 1},  // conv1: two vectors a row, 75 taps
		{8, 5, 16, 18, 3, 0, 1, 1, 3},   // no pad, 45 taps (a last block of 3)
		{4, 2, 20, 16, 3, 2, 1, 2, 2},   // dilated
		{12, 3, 17, 32, 3, 1, 2, 1, 2},  // stride 2 down the rows only
		{64, 32, 8, 8, 5, 2, 1, 1, 3},   // conv3: rows of 8 in pairs
		{8, 3, 12, 10, 3, 0, 1, 1, 2},   // rows of 8 without pad
	} {
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			g := &ConvGeometry{Channels: s.c, In: []int{s.h, s.w}, Kernel: []int{s.k, s.k}, Pad: []int{s.pad, s.pad},
				Stride: []int{s.strideH, 1}, Dilation: []int{s.dil, s.dil}}
			g.Out = []int{ConvOutputSize(s.h, s.k, s.pad, s.strideH, s.dil), ConvOutputSize(s.w, s.k, s.pad, 1, s.dil)}
			kd, hw := g.KernelDim(), prod(g.Out)
			n := s.images * hw
			im := randSlice[float32](s.images*g.ImSize(), -1, 1, 2)
			col := make([]float32, kd*n)
			for j := range s.images {
				Im2colLD(im[j*g.ImSize():], g, col[j*hw:], n)
			}
			p.Reset(g, s.images, make([]float32, ConvPanelsSize(g, s.images)))
			for j := range s.images {
				p.SetImage(j, im[j*g.ImSize():])
			}
			dy := randSlice[float32](s.m*n, -1, 1, 3)
			got := randSlice[float32](s.m*kd, -1, 1, 4)
			want := make([]float64, len(got))
			for i := range s.m {
				for j := range kd {
					sum := float64(got[i*kd+j])
					for q := range n {
						sum += float64(dy[i*n+q]) * float64(col[j*n+q])
					}
					want[i*kd+j] = sum
				}
			}
			if !GemmConvTapsDot(s.m, dy, n, &p, got) {
				t.Fatal("not run")
			}
			for i, w := range want {
				if d := math.Abs(float64(got[i]) - w); d > 1e-5*math.Sqrt(float64(n))*math.Max(1, math.Abs(w)) {
					t.Fatalf("dW[%d] = %v, want %v", i, got[i], w)
				}
			}
		})
	}
	// Not taken: output rows of neither whole vectors nor pairs of
	// halves, float64.
	g := &ConvGeometry{Channels: 2, In: []int{7, 8}, Out: []int{7, 8}, Kernel: []int{3, 3}, Pad: []int{1, 1}, Stride: []int{1, 1}, Dilation: []int{1, 1}}
	p.Reset(g, 1, make([]float32, ConvPanelsSize(g, 1)))
	if GemmConvTapsDot(4, make([]float32, 4*56), 56, &p, make([]float32, 4*18)) {
		t.Error("7 output rows of 8 positions taken")
	}
	var p64 ConvPanels[float64]
	g16 := &ConvGeometry{Channels: 2, In: []int{4, 16}, Out: []int{4, 16}, Kernel: []int{3, 3}, Pad: []int{1, 1}, Stride: []int{1, 1}, Dilation: []int{1, 1}}
	p64.Reset(g16, 1, make([]float64, ConvPanelsSize(g16, 1)))
	if GemmConvTapsDot(4, make([]float64, 4*64), 64, &p64, make([]float64, 4*18)) {
		t.Error("float64 taken")
	}
}

// BenchmarkConvTaps reports GFLOP/s of a convolution's weight gradient
// both ways, GemmConvTaps's GEMM and GemmConvTapsDot's dot products, on
// the calling goroutine: CIFAR-10 quick's conv1, conv2 with 1, 2 and 8
// images to a product, and conv3 (rows of 8 in pairs).
func BenchmarkConvTaps(b *testing.B) {
	for _, s := range []struct{ m, c, h, images int }{{32, 3, 32, 1}, {32, 32, 16, 1}, {32, 32, 16, 2}, {32, 32, 16, 8}, {64, 32, 8, 8}} {
		g := &ConvGeometry{Channels: s.c, In: []int{s.h, s.h}, Out: []int{s.h, s.h}, Kernel: []int{5, 5}, Pad: []int{2, 2}, Stride: []int{1, 1}, Dilation: []int{1, 1}}
		var p ConvPanels[float32]
		p.Reset(g, s.images, make([]float32, ConvPanelsSize(g, s.images)))
		im := randSlice[float32](s.images*g.ImSize(), -1, 1, 2)
		for j := range s.images {
			p.SetImage(j, im[j*g.ImSize():])
		}
		n := s.images * s.h * s.h
		dy := randSlice[float32](s.m*n, -1, 1, 3)
		c := make([]float32, s.m*g.KernelDim())
		flops := 2 * float64(s.m*n*g.KernelDim())
		b.Run(fmt.Sprint("gemm", s), func(b *testing.B) {
			for b.Loop() {
				GemmConvTaps(s.m, dy, n, &p, c)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprint("dot", s), func(b *testing.B) {
			for b.Loop() {
				GemmConvTapsDot(s.m, dy, n, &p, c)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
