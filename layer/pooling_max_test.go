package layer

import (
	"math"
	"math/rand/v2"
	"testing"
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
// float64, with padding.
func TestMaxPoolSpecialValues(t *testing.T) {
	specials := []float64{0, math.Copysign(0, -1), 1, 1, -1, math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1),
		-math.MaxFloat32, math.MaxFloat32, 2.5, -2.5}
	g := &poolGeom{num: 1, channels: 1, height: 7, width: 6, kernelH: 3, kernelW: 2, strideH: 2, strideW: 1, padH: 1, padW: 1}
	g.pooledH, g.pooledW = (g.height+2*g.padH-g.kernelH+g.strideH-1)/g.strideH+1, (g.width+2*g.padW-g.kernelW+g.strideW-1)/g.strideW+1
	rng := rand.New(rand.NewPCG(3, 4))
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
			for o := range y {
				same := math.Float64bits(y[o]) == math.Float64bits(wantRare[o]) || (math.IsNaN(y[o]) && math.IsNaN(wantRare[o]))
				if !same || int(idx[o]) != wantIdx[o] {
					t.Fatalf("%s trial %d output %d: %v at %v, want %v at %d (plane %v)", name, trial, o, y[o], idx[o], wantRare[o], wantIdx[o], x)
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
		maxPoolPlane(g, x32, y32, idx32)
		for o := range y {
			y[o], idx[o] = float64(y32[o]), float64(idx32[o])
		}
		check("float32", y, idx)
	}
}
