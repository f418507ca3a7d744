package data

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestResizeBilinearHandComputed(t *testing.T) {
	for _, tc := range []struct {
		name            string
		src             []byte
		c, h, w, nh, nw int
		want            []byte
	}{
		// Upscaling 2x with aligned pixel centres: the outer pixels copy
		// the edges, the inner ones are 1/4 and 3/4 of the way.
		{"up 1x2 to 1x4", []byte{0, 100}, 1, 1, 2, 1, 4, []byte{0, 25, 75, 100}},
		// Shrinking 2x samples half-way between source pixel pairs.
		{"down 1x4 to 1x2", []byte{0, 10, 20, 31}, 1, 1, 4, 1, 2, []byte{5, 26}},
		// Both axes: the centre of a 2x2 block is the mean of its corners
		// (rounded half up: 37.5 -> 38).
		{"down 2x2 to 1x1", []byte{0, 50, 50, 50}, 1, 2, 2, 1, 1, []byte{38}},
		// Planes are resized independently.
		{"two planes", []byte{0, 100, 200, 100}, 2, 1, 2, 1, 4, []byte{0, 25, 75, 100, 200, 175, 125, 100}},
		// A single source pixel fills everything.
		{"1x1 to 2x3", []byte{9}, 1, 1, 1, 2, 3, []byte{9, 9, 9, 9, 9, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResizeBilinear(tc.src, tc.c, tc.h, tc.w, tc.nh, tc.nw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResizeBilinearSameSizeCopies(t *testing.T) {
	src := []byte{1, 2, 3, 4, 5, 6}
	got, err := ResizeBilinear(src, 2, 1, 3, 1, 3)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("got %v, %v", got, err)
	}
	got[0] = 99
	if src[0] != 1 {
		t.Error("the result shares memory with the source")
	}
}

// TestResizeBilinearMatchesFloat compares random resizes with a
// floating-point evaluation of the same mapping: the fixed-point weights
// may move a value by at most one grey level.
func TestResizeBilinearMatchesFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		c, h, w := 1+rng.IntN(3), 1+rng.IntN(20), 1+rng.IntN(20)
		nh, nw := 1+rng.IntN(30), 1+rng.IntN(30)
		src := make([]byte, c*h*w)
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		got, err := ResizeBilinear(src, c, h, w, nh, nw)
		if err != nil {
			t.Fatal(err)
		}
		coord := func(d, n, s int) (int, int, float64) {
			f := (float64(d)+0.5)*float64(s)/float64(n) - 0.5
			i := int(math.Floor(f))
			a := f - float64(i)
			if i < 0 {
				i, a = 0, 0
			}
			if i >= s-1 {
				i, a = s-1, 0
			}
			return i, min(i+1, s-1), a
		}
		for ch := range c {
			for y := range nh {
				y0, y1, b := coord(y, nh, h)
				for x := range nw {
					x0, x1, a := coord(x, nw, w)
					at := func(yy, xx int) float64 { return float64(src[(ch*h+yy)*w+xx]) }
					want := (1-b)*((1-a)*at(y0, x0)+a*at(y0, x1)) + b*((1-a)*at(y1, x0)+a*at(y1, x1))
					if d := math.Abs(float64(got[(ch*nh+y)*nw+x]) - want); d > 1 {
						t.Fatalf("%dx%dx%d -> %dx%d: pixel (%d,%d,%d) = %d, float %.3f", c, h, w, nh, nw, ch, y, x, got[(ch*nh+y)*nw+x], want)
					}
				}
			}
		}
	}
}

func TestResizeBilinearErrors(t *testing.T) {
	if _, err := ResizeBilinear(make([]byte, 5), 1, 2, 3, 4, 4); err == nil {
		t.Error("wrong source length accepted")
	}
	if _, err := ResizeBilinear(make([]byte, 6), 1, 2, 3, 0, 4); err == nil {
		t.Error("zero target size accepted")
	}
	if _, err := ResizeBilinear(nil, 0, 2, 3, 4, 4); err == nil {
		t.Error("zero channels accepted")
	}
}
