package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// maxPoolCaffe is Caffe's loop over one window: the largest value above
// -MaxFloat32, NaNs never larger, -MaxFloat32 if none.
func maxPoolCaffe[T Float](g *PoolWindows, x []T, oh, ow int) T {
	h0, w0 := oh*g.StrideH-g.PadH, ow*g.StrideW-g.PadW
	h1, w1 := min(h0+g.KernelH, g.H), min(w0+g.KernelW, g.W)
	best := T(-math.MaxFloat32)
	for h := max(h0, 0); h < h1; h++ {
		for w := max(w0, 0); w < w1; w++ {
			if v := x[h*g.W+w]; v > best {
				best = v
			}
		}
	}
	return best
}

// MaxPoolValues finds each window's value as Caffe's loop does, with
// padding, strides up to 3, windows past the plane (ceil rounding), planes
// narrower and wider than the vector kernels, and NaNs and infinities.
func TestMaxPoolValues(t *testing.T) {
	testMaxPoolValues[float32](t)
	testMaxPoolValues[float64](t)
}

func testMaxPoolValues[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1)), T(-math.MaxFloat32), 0, T(math.Copysign(0, -1))}
	for _, hw := range [][2]int{{1, 1}, {5, 7}, {9, 17}, {13, 13}, {28, 28}, {4, 40}, {3, 112}, {2, 67}} {
		for _, k := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {3, 2}, {5, 5}} {
			for _, s := range []int{1, 2, 3} {
				for _, pad := range []int{0, 1, 2} {
					if pad >= max(k[0], k[1]) || k[0] > hw[0]+2*pad || k[1] > hw[1]+2*pad {
						continue
					}
					g := &PoolWindows{H: hw[0], W: hw[1], KernelH: k[0], KernelW: k[1], StrideH: s, StrideW: s, PadH: pad, PadW: pad}
					// Caffe's ceil rounding, less a last window that
					// would start in the right or bottom padding.
					out := func(in, kern int) int {
						o := (in+2*pad-kern+s-1)/s + 1
						if pad > 0 && (o-1)*s >= in+pad {
							o--
						}
						return o
					}
					g.OutH, g.OutW = out(hw[0], k[0]), out(hw[1], k[1])
					t.Run(fmt.Sprintf("%T/%dx%d/k%dx%d/s%d/p%d", T(0), hw[0], hw[1], k[0], k[1], s, pad), func(t *testing.T) {
						x := make([]T, g.H*g.W)
						for i := range x {
							if rng.IntN(8) == 0 {
								x[i] = special[rng.IntN(len(special))]
							} else {
								x[i] = T(rng.NormFloat64())
							}
						}
						y := make([]T, g.OutH*g.OutW)
						MaxPoolValues(g, x, y, make([]T, g.MaxPoolScratch()))
						for oh := range g.OutH {
							for ow := range g.OutW {
								if got, want := y[oh*g.OutW+ow], maxPoolCaffe(g, x, oh, ow); got != want {
									t.Fatalf("y[%d][%d] = %v, want %v", oh, ow, got, want)
								}
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkMaxPoolValues times GoogLeNet's pools (3x3, strides 2 and 1)
// on one plane.
func BenchmarkMaxPoolValues(b *testing.B) {
	for _, c := range []struct {
		name      string
		in, s, pd int
	}{{"112_s2", 112, 2, 0}, {"28_s1", 28, 1, 1}, {"14_s1", 14, 1, 1}} {
		o := (c.in+2*c.pd-3+c.s-1)/c.s + 1
		g := &PoolWindows{H: c.in, W: c.in, OutH: o, OutW: o, KernelH: 3, KernelW: 3, StrideH: c.s, StrideW: c.s, PadH: c.pd, PadW: c.pd}
		x := randSlice[float32](c.in*c.in, -1, 1, 1)
		y := make([]float32, o*o)
		scratch := make([]float32, g.MaxPoolScratch())
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				MaxPoolValues(g, x, y, scratch)
			}
		})
	}
}
