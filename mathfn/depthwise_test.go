package mathfn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTaps9 holds Taps9 and Dots9 (the AVX2 kernels where the CPU has
// them, the Go loops for the rest of a row) to sums in float64, at every
// row length around the vector widths and with the ReLU on and off.
func TestTaps9(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 70; n++ {
		p := make([]float32, 3*n+40)
		for i := range p {
			p[i] = float32(rng.Float64()*2 - 1)
		}
		var off [9]int
		var w [9]float32
		for k := range off {
			off[k] = rng.IntN(len(p) - n + 1)
			w[k] = float32(rng.Float64()*2 - 1)
		}
		for _, relu := range []bool{false, true} {
			out := make([]float32, n+3)
			out[n] = 42 // past the row: untouched
			bias := float32(0.25)
			Taps9(out, p, &off, &w, n, bias, relu)
			for x := range n {
				want := float64(bias)
				for k := range 9 {
					want += float64(w[k]) * float64(p[off[k]+x])
				}
				if relu {
					want = math.Max(want, 0)
				}
				if d := math.Abs(float64(out[x]) - want); d > 1e-5 {
					t.Fatalf("n %d relu %v: out[%d] = %v, want %v", n, relu, x, out[x], want)
				}
			}
			if out[n] != 42 {
				t.Fatalf("n %d: wrote past the row", n)
			}
		}
		dy := p[:n]
		acc := [9]float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
		Dots9(&acc, dy, p, &off, n)
		for k := range 9 {
			want := 1.0
			for x := range n {
				want += float64(dy[x]) * float64(p[off[k]+x])
			}
			if d := math.Abs(float64(acc[k]) - want); d > 1e-4 {
				t.Fatalf("n %d: dot %d = %v, want %v", n, k, acc[k], want)
			}
		}
	}
}

// TestTaps9ReLUKeepsNaN: a NaN sum stays NaN through the ReLU, as Caffe's
// max(x, 0) leaves it.
func TestTaps9ReLUKeepsNaN(t *testing.T) {
	p := make([]float32, 32)
	p[3] = float32(math.NaN())
	var off [9]int
	w := [9]float32{1}
	out := make([]float32, 16)
	Taps9(out, p, &off, &w, 16, 0, true)
	if !math.IsNaN(float64(out[3])) || out[2] != 0 {
		t.Fatalf("out = %v, want NaN at 3 and zeros", out)
	}
}

// TestTaps9RefusesReadsOutsideThePlane: a tap past the plane is a
// programmer's error, caught before the kernel reads.
func TestTaps9RefusesReadsOutsideThePlane(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	p := make([]float32, 20)
	off := [9]int{0, 0, 0, 0, 0, 0, 0, 0, 5}
	var w [9]float32
	Taps9(make([]float32, 16), p, &off, &w, 16, 0, false)
}

func BenchmarkTaps9(b *testing.B) {
	const n = 112
	p := make([]float32, 3*n+8)
	out := make([]float32, n)
	off := [9]int{0, 1, 2, n + 2, n + 3, n + 4, 2*n + 4, 2*n + 5, 2*n + 6}
	var w [9]float32
	b.SetBytes(4 * n)
	for b.Loop() {
		Taps9(out, p, &off, &w, n, 0, true)
	}
}

// BenchmarkTaps9Short times a 14-wide row (MobileNet's 14x14 planes):
// one vector and the rest of the row.
func BenchmarkTaps9Short(b *testing.B) {
	const n = 14
	p := make([]float32, 3*n+8)
	out := make([]float32, n)
	off := [9]int{0, 1, 2, n + 2, n + 3, n + 4, 2*n + 4, 2*n + 5, 2*n + 6}
	var w [9]float32
	for b.Loop() {
		Taps9(out, p, &off, &w, n, 0, true)
	}
}

// TestTaps9S2 holds Taps9S2 to sums in float64 over rows of every length
// around the vector width, with the vertical strides 1 and 2, output rows
// wider than n, planes with and without room past the last tap (the
// rows that lack it summed in Go), and the ReLU on and off.
func TestTaps9S2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 37; n++ {
		for _, extra := range []int{0, 1} { // wp = 2n+1 or 2n+2: the padded row's two parities
			for _, sh := range []int{1, 2} {
				for _, slack := range []int{0, 3, 16} {
					for _, relu := range []bool{false, true} {
						checkTaps9S2(t, rng, n, 2*n+1+extra, sh, 1+n%5, slack, relu)
					}
				}
			}
		}
	}
}

func checkTaps9S2(t *testing.T, rng *rand.Rand, n, wp, sh, rows, slack int, relu bool) {
	t.Helper()
	step := sh * wp
	p := make([]float32, (rows-1)*step+2*wp+2*n+1+slack)
	for i := range p {
		p[i] = float32(rng.Float64()*2 - 1)
	}
	var w [9]float32
	for k := range w {
		w[k] = float32(rng.Float64()*2 - 1)
	}
	outStride := n + rows%3
	out := make([]float32, (rows-1)*outStride+n+2)
	for i := range out {
		out[i] = 42
	}
	bias := float32(-0.125)
	Taps9S2(out, outStride, p, step, wp, &w, rows, n, bias, relu)
	for y := range rows {
		for x := range n {
			want := float64(bias)
			for ky := range 3 {
				for kx := range 3 {
					want += float64(w[3*ky+kx]) * float64(p[y*step+ky*wp+2*x+kx])
				}
			}
			if relu {
				want = math.Max(want, 0)
			}
			if got := out[y*outStride+x]; math.Abs(float64(got)-want) > 1e-5 {
				t.Fatalf("n %d wp %d sh %d rows %d slack %d relu %v: out[%d][%d] = %v, want %v", n, wp, sh, rows, slack, relu, y, x, got, want)
			}
		}
		for x := n; x < outStride && y*outStride+x < len(out); x++ {
			if out[y*outStride+x] != 42 {
				t.Fatalf("n %d wp %d rows %d: wrote past row %d", n, wp, rows, y)
			}
		}
	}
	if out[len(out)-1] != 42 || out[len(out)-2] != 42 {
		t.Fatalf("n %d wp %d rows %d: wrote past the last row", n, wp, rows)
	}
}

// BenchmarkTaps9S2 times MobileNet's 112x112 -> 56x56 stride-2 plane.
func BenchmarkTaps9S2(b *testing.B) {
	const n, wp = 56, 114
	p := make([]float32, wp*wp+16)
	out := make([]float32, n*n)
	var w [9]float32
	b.SetBytes(4 * n * n)
	for b.Loop() {
		Taps9S2(out, n, p, 2*wp, wp, &w, n, n, 0, true)
	}
}
