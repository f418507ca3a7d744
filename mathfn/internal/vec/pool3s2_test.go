package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pool3s2Cases are plane sizes with both roundings of the output size:
// CIFAR-10 quick's three pools, odd and even sizes, one wider than a
// chunk of sixteen outputs, and planes smaller than a window.
func pool3s2Cases() []Pool3x3S2 {
	var gs []Pool3x3S2
	for _, hw := range [][2]int{{32, 32}, {16, 16}, {8, 8}, {7, 9}, {3, 3}, {2, 5}, {1, 1}, {13, 35}, {5, 33}, {4, 34}, {6, 67}, {9, 100}} {
		h, w := hw[0], hw[1]
		floor := func(n int) int { return max(n-3, 0)/2 + 1 }
		ceil := func(n int) int { return (max(n-3, 0)+1)/2 + 1 }
		gs = append(gs, Pool3x3S2{H: h, W: w, OutH: floor(h), OutW: floor(w)}, Pool3x3S2{H: h, W: w, OutH: ceil(h), OutW: ceil(w)})
	}
	return gs
}

// pool3s2Input is n planes of random values with ties (values drawn from
// a few), and, when special, NaNs, infinities, -FLT_MAX and signed zeros.
func pool3s2Input(rng *rand.Rand, size int, special bool) []float32 {
	x := make([]float32, size)
	picks := []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)), -math.MaxFloat32, 0, float32(math.Copysign(0, -1))}
	for i := range x {
		x[i] = float32(rng.IntN(7)-3) * 0.25
		if rng.IntN(3) == 0 {
			x[i] = float32(rng.NormFloat64())
		}
		if special && rng.IntN(5) == 0 {
			x[i] = picks[rng.IntN(len(picks))]
		}
	}
	return x
}

// window is output (oh, ow)'s window clipped to the plane.
func (g Pool3x3S2) window(oh, ow int) (h0, h1, w0, w1 int) {
	return 2 * oh, min(2*oh+3, g.H), 2 * ow, min(2*ow+3, g.W)
}

// MaxPool3x3S2 gives Caffe's loop's values and positions bit for bit.
func TestMaxPool3x3S2(t *testing.T) {
	if !HasPool3x3S2 {
		t.Skip("no kernel")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range pool3s2Cases() {
		for _, special := range []bool{false, true} {
			const n = 3
			x := pool3s2Input(rng, n*g.H*g.W, special)
			y, idx := make([]float32, n*g.OutH*g.OutW+1), make([]float32, n*g.OutH*g.OutW+1)
			y[len(y)-1], idx[len(idx)-1] = 42, 42 // past the outputs: untouched
			if !MaxPool3x3S2(g, n, x, y, idx) {
				t.Fatalf("%+v: no kernel run", g)
			}
			for p := range n {
				xp := x[p*g.H*g.W:]
				for oh := range g.OutH {
					for ow := range g.OutW {
						h0, h1, w0, w1 := g.window(oh, ow)
						best, arg := float32(-math.MaxFloat32), -1
						for h := h0; h < h1; h++ {
							for w := w0; w < w1; w++ {
								if v := xp[h*g.W+w]; v > best {
									best, arg = v, h*g.W+w
								}
							}
						}
						o := p*g.OutH*g.OutW + oh*g.OutW + ow
						if math.Float32bits(y[o]) != math.Float32bits(best) || idx[o] != float32(arg) {
							t.Fatalf("%+v plane %d output (%d, %d): %v at %v, want %v at %d", g, p, oh, ow, y[o], idx[o], best, arg)
						}
					}
				}
			}
			if y[len(y)-1] != 42 || idx[len(idx)-1] != 42 {
				t.Fatalf("%+v: wrote past the outputs", g)
			}
		}
	}
}

// AvePool3x3S2 gives Caffe's sums and divisions bit for bit.
func TestAvePool3x3S2(t *testing.T) {
	if !HasPool3x3S2 {
		t.Skip("no kernel")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, g := range pool3s2Cases() {
		const n = 3
		x := pool3s2Input(rng, n*g.H*g.W, false)
		y := make([]float32, n*g.OutH*g.OutW+1)
		y[len(y)-1] = 42
		if !AvePool3x3S2(g, n, x, y) {
			t.Fatalf("%+v: no kernel run", g)
		}
		for p := range n {
			xp := x[p*g.H*g.W:]
			for oh := range g.OutH {
				for ow := range g.OutW {
					h0, h1, w0, w1 := g.window(oh, ow)
					var sum float32
					for h := h0; h < h1; h++ {
						for w := w0; w < w1; w++ {
							sum += xp[h*g.W+w]
						}
					}
					want := sum / float32((h1-h0)*(w1-w0))
					if o := p*g.OutH*g.OutW + oh*g.OutW + ow; math.Float32bits(y[o]) != math.Float32bits(want) {
						t.Fatalf("%+v plane %d output (%d, %d): %v, want %v", g, p, oh, ow, y[o], want)
					}
				}
			}
		}
		if y[len(y)-1] != 42 {
			t.Fatalf("%+v: wrote past the outputs", g)
		}
	}
}

// AvePool3x3S2Back gives Caffe's gradient bit for bit: each window's
// share added window after window.
func TestAvePool3x3S2Back(t *testing.T) {
	if !HasPool3x3S2 {
		t.Skip("no kernel")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, g := range pool3s2Cases() {
		const n = 3
		dy := pool3s2Input(rng, n*g.OutH*g.OutW, false)
		for i := range dy {
			dy[i] = float32(rng.NormFloat64()) // sums that round
		}
		dx := pool3s2Input(rng, n*g.H*g.W+1, false) // garbage, cleared
		dx[len(dx)-1] = 42
		if !AvePool3x3S2Back(g, n, dy, dx) {
			t.Fatalf("%+v: no kernel run", g)
		}
		want := make([]float32, n*g.H*g.W)
		for p := range n {
			wp := want[p*g.H*g.W:]
			for oh := range g.OutH {
				for ow := range g.OutW {
					h0, h1, w0, w1 := g.window(oh, ow)
					d := dy[p*g.OutH*g.OutW+oh*g.OutW+ow] / float32((h1-h0)*(w1-w0))
					for h := h0; h < h1; h++ {
						for w := w0; w < w1; w++ {
							wp[h*g.W+w] += d
						}
					}
				}
			}
		}
		for i, v := range want {
			if math.Float32bits(dx[i]) != math.Float32bits(v) {
				t.Fatalf("%+v: dx[%d] = %v, want %v", g, i, dx[i], v)
			}
		}
		if dx[len(dx)-1] != 42 {
			t.Fatalf("%+v: wrote past the plane", g)
		}
	}
}

// MaxPool3x3S2Back gives Caffe's gradient bit for bit: each window's dy
// added to its argmax's element, window after window, with argmaxes of
// -1 (none) and several windows sharing an element.
func TestMaxPool3x3S2Back(t *testing.T) {
	if !HasPool3x3S2 {
		t.Skip("no kernel")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, g := range pool3s2Cases() {
		const n = 3
		x := pool3s2Input(rng, n*g.H*g.W, true)
		y, idx := make([]float32, n*g.OutH*g.OutW), make([]float32, n*g.OutH*g.OutW)
		if !MaxPool3x3S2(g, n, x, y, idx) {
			t.Fatalf("%+v: no forward kernel run", g)
		}
		dy := make([]float32, len(y))
		for i := range dy {
			dy[i] = float32(rng.NormFloat64())
		}
		dx := pool3s2Input(rng, n*g.H*g.W+1, false) // garbage, overwritten
		dx[len(dx)-1] = 42
		if !MaxPool3x3S2Back(g, n, dy, idx, dx) {
			t.Fatalf("%+v: no kernel run", g)
		}
		want := make([]float32, n*g.H*g.W)
		for p := range n {
			for o := range g.OutH * g.OutW {
				if i := int(idx[p*g.OutH*g.OutW+o]); i >= 0 {
					want[p*g.H*g.W+i] += dy[p*g.OutH*g.OutW+o]
				}
			}
		}
		for i, v := range want {
			if math.Float32bits(dx[i]) != math.Float32bits(v) {
				t.Fatalf("%+v: dx[%d] = %v, want %v", g, i, dx[i], v)
			}
		}
		if dx[len(dx)-1] != 42 {
			t.Fatalf("%+v: wrote past the plane", g)
		}
	}
}
