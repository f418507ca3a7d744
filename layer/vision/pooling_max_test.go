package vision

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gocaffe/gocaffe/mathfn"
)

// caffeMaxPool is Caffe's max pooling loop for one plane, as
// pooling_layer.cpp writes it: the top starts at -FLT_MAX and the mask at
// -1; a value replaces it only if larger (NaNs never are).
func caffeMaxPool(g *poolGeom, x []float64) (y []float64, idx []int) {
	for ph := range g.pooledH {
		for pw := range g.pooledW {
			h0, h1, w0, w1, _ := g.window(ph, pw)
			best, arg := -math.MaxFloat32, -1
			for h := h0; h < h1; h++ {
				for w := w0; w < w1; w++ {
					if v := x[h*g.width+w]; v > best {
						best, arg = v, h*g.width+w
					}
				}
			}
			y, idx = append(y, best), append(idx, arg)
		}
	}
	return y, idx
}

// TestMaxPoolSpecialValues holds the comparison of values by their bits
// to Caffe's comparison of floats where the two could part: ties (the
// first wins), -0 beside +0, NaNs (never the maximum unless the whole
// window is NaN), -Inf and -FLT_MAX (only the rare path), in float32 and
// float64, one window at a time and sixteen at a time (float32 where the
// CPU has the vector kernel), on geometries with padding, overlapping
// and gapped windows, clipped last windows, and runs of windows inside
// the image that span rows.
func TestMaxPoolSpecialValues(t *testing.T) {
	geoms := []poolGeom{
		{height: 7, width: 6, kernelH: 3, kernelW: 2, strideH: 2, strideW: 1, padH: 1, padW: 1},
		{height: 24, width: 24, kernelH: 2, kernelW: 2, strideH: 2, strideW: 2},
		{height: 8, width: 8, kernelH: 2, kernelW: 2, strideH: 2, strideW: 2},
		{height: 32, width: 35, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2},
		{height: 9, width: 8, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2},
		{height: 3, width: 36, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2},
		{height: 13, width: 40, kernelH: 3, kernelW: 3, strideH: 1, strideW: 1, padH: 1, padW: 1},
		{height: 9, width: 37, kernelH: 2, kernelW: 3, strideH: 3, strideW: 4, padH: 1, padW: 2},
		{height: 5, width: 5, kernelH: 5, kernelW: 5, strideH: 1, strideW: 1},
		{height: 6, width: 21, kernelH: 3, kernelW: 3, strideH: 1, strideW: 1},                   // runs of stride 1 that span rows
		{height: 9, width: 24, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2, padH: 1, padW: 1}, // runs of stride 2 short of sixteen
		{height: 7, width: 40, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2},                   // and over sixteen, the last clipped
		// Rows clipped at the top and at the bottom by as many kernel
		// rows (other rows inside, the same count): each takes its own.
		{height: 4, width: 7, kernelH: 4, kernelW: 4, strideH: 2, strideW: 2, padH: 3, padW: 2},
		{height: 2, width: 20, kernelH: 3, kernelW: 3, strideH: 1, strideW: 1, padH: 1, padW: 1},
		{height: 3, width: 33, kernelH: 3, kernelW: 3, strideH: 2, strideW: 2, padH: 1, padW: 1},
	}
	for gi := range geoms {
		g := &geoms[gi]
		g.num, g.channels = 1, 1
		g.pooledH, g.pooledW = (g.height+2*g.padH-g.kernelH+g.strideH-1)/g.strideH+1, (g.width+2*g.padW-g.kernelW+g.strideW-1)/g.strideW+1
		if (g.pooledH-1)*g.strideH >= g.height+g.padH {
			g.pooledH--
		}
		if (g.pooledW-1)*g.strideW >= g.width+g.padW {
			g.pooledW--
		}
		g.setOffsets()
		testMaxPoolGeom(t, g, uint64(gi))
	}
}

// testMaxPoolGeom runs TestMaxPoolSpecialValues's trials on geometry g.
func testMaxPoolGeom(t *testing.T, g *poolGeom, seed uint64) {
	specials := []float64{0, math.Copysign(0, -1), 1, 1, -1, math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1),
		-math.MaxFloat32, math.MaxFloat32, 2.5, -2.5}
	rng := rand.New(rand.NewPCG(3, seed))
	for trial := range 300 {
		x := make([]float64, g.height*g.width)
		for i := range x {
			x[i] = specials[rng.IntN(len(specials))]
		}
		if trial%10 == 0 { // whole windows of NaN, or of -Inf
			v := []float64{math.NaN(), math.Inf(-1)}[trial/10%2]
			for i := range x[:2*g.width] {
				x[i] = v
			}
		}
		wantY, wantIdx := caffeMaxPool(g, x)
		wantRare := make([]float64, len(wantY))
		for o := range wantY {
			wantRare[o] = wantY[o]
			if wantIdx[o] < 0 { // Caffe's GPU kernel and ours then take the rare path
				h0, h1, w0, w1, _ := g.window(o/g.pooledW, o%g.pooledW)
				var arg int
				wantRare[o], arg = maxPoolRare(g, x, h0, h1, w0, w1)
				wantIdx[o] = arg
			}
		}
		check := func(name string, y, idx []float64) {
			t.Helper()
			for o := range y {
				same := math.Float64bits(y[o]) == math.Float64bits(wantRare[o]) || (math.IsNaN(y[o]) && math.IsNaN(wantRare[o]))
				if !same || int(idx[o]) != wantIdx[o] {
					t.Fatalf("%s, geometry %+v, trial %d output %d: %v at %v, want %v at %d (plane %v)", name, *g, trial, o, y[o], idx[o], wantRare[o], wantIdx[o], x)
				}
			}
		}
		n := g.pooledH * g.pooledW
		y, idx := make([]float64, n), make([]float64, n)
		maxPoolPlane(g, x, y, idx)
		check("float64", y, idx)
		x32, y32, idx32 := make([]float32, len(x)), make([]float32, n), make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		widen := func() {
			for o := range y {
				y[o], idx[o] = float64(y32[o]), float64(idx32[o])
			}
		}
		maxPoolPlane(g, x32, y32, idx32)
		widen()
		check("float32", y, idx)
		bits := unsafe.Slice((*int32)(unsafe.Pointer(&x32[0])), len(x32))
		maxPoolBits(g, bits, x32, y32, idx32)
		widen()
		check("float32 one window at a time", y, idx)
		w32 := &mathfn.PoolWindows{H: g.height, W: g.width, OutH: g.pooledH, OutW: g.pooledW, KernelH: g.kernelH, KernelW: g.kernelW,
			StrideH: g.strideH, StrideW: g.strideW, PadH: g.padH, PadW: g.padW}
		maxPoolArgByValue(g, w32, x32, y32, idx32, make([]float32, w32.MaxPoolScratch()))
		widen()
		check("float32 maxima by vector, then their index", y, idx)
		l := poolingLayer[float32]{poolGeom: *g}
		if g3, ok := l.pool3s2(); ok && maxPool3s2(g, g3, 1, x32, y32, idx32) {
			widen()
			check("float32 3x3 stride 2, a row of windows at a time", y, idx)
		}
		// Without the argmax (an inference-only pass): the same values,
		// where a zero may have either sign.
		w := &mathfn.PoolWindows{H: g.height, W: g.width, OutH: g.pooledH, OutW: g.pooledW, KernelH: g.kernelH, KernelW: g.kernelW,
			StrideH: g.strideH, StrideW: g.strideW, PadH: g.padH, PadW: g.padW}
		values := func(name string, y []float64) {
			t.Helper()
			for o := range y {
				if y[o] != wantRare[o] && !(math.IsNaN(y[o]) && math.IsNaN(wantRare[o])) {
					t.Fatalf("%s, geometry %+v, trial %d output %d: %v, want %v (plane %v)", name, *g, trial, o, y[o], wantRare[o], x)
				}
			}
		}
		maxPoolValues(g, w, x, y, make([]float64, w.MaxPoolScratch()))
		values("float64 without argmax", y)
		maxPoolValues(g, w, x32, y32, make([]float32, w.MaxPoolScratch()))
		widen()
		values("float32 without argmax", y)
	}
}

// holdsFloor finds -MaxFloat32 at every place of slices of every length
// up to 9 and both alignments, and nothing in slices of its neighbours
// (the float32 values whose bits differ from its by one, and -0).
func TestHoldsFloor(t *testing.T) {
	floor := float32(-math.MaxFloat32)
	near := []float32{math.Float32frombits(0xff7ffffe), math.Float32frombits(0x7f7fffff), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), float32(math.NaN())}
	buf := make([]float32, 12)
	for off := range 2 {
		for n := range 10 {
			y := buf[off : off+n]
			for i := range y {
				y[i] = near[i%len(near)]
			}
			if holdsFloor(y) {
				t.Fatalf("offset %d, %d values without the floor: found", off, n)
			}
			for at := range y {
				v := y[at]
				y[at] = floor
				if !holdsFloor(y) {
					t.Fatalf("offset %d, %d values, the floor at %d: not found", off, n, at)
				}
				y[at] = v
			}
		}
	}
	if !holdsFloor([]float64{1, 2}) {
		t.Error("float64 values: false, want true (not looked for)")
	}
}
