package vision

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The float32 AVE pass of a 3x3 pooling of stride 2 without padding
// (mathfn.AvePool3x3S2 and its gradient where the CPU has them) gives
// Caffe's loops' sums, divisions and accumulated gradients bit for bit,
// over several planes at once, with the last windows clipped (CEIL) or
// not; the MAX pass's gradient is Caffe's sums over its argmaxes (its
// values and argmaxes: TestMaxPoolSpecialValues).
func TestPool3x3S2Planes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, hw := range [][2]int{{16, 16}, {8, 8}, {9, 11}, {5, 40}} {
		for _, ceil := range []bool{true, false} {
			g := poolGeom{num: 2, channels: 3, height: hw[0], width: hw[1], kernelH: 3, kernelW: 3, strideH: 2, strideW: 2}
			var err error
			if g.pooledH, err = pooledSize("height", g.height, 3, 0, 2, ceil); err != nil {
				t.Fatal(err)
			}
			if g.pooledW, err = pooledSize("width", g.width, 3, 0, 2, ceil); err != nil {
				t.Fatal(err)
			}
			n, in, out := g.planes()
			l := &poolingLayer[float32]{method: caffepb.PoolingParameter_MAX, poolGeom: g}
			l.x, l.y, l.idx = make([]float32, n*in), make([]float32, n*out), make([]float32, n*out)
			l.dy, l.dx = make([]float32, n*out), make([]float32, n*in)
			for i := range l.x {
				l.x[i] = float32(rng.IntN(5)) // ties: windows sharing their argmax
			}
			for i := range l.dy {
				l.dy[i] = float32(rng.NormFloat64())
			}
			l.forwardPlanes(0, 0, n)
			l.backwardPlanes(0, 0, n)
			wantMax := make([]float32, n*in)
			for o, i := range l.idx {
				wantMax[o/out*in+int(i)] += l.dy[o]
			}
			for i := range wantMax {
				if math.Float32bits(l.dx[i]) != math.Float32bits(wantMax[i]) {
					t.Fatalf("MAX %dx%d ceil %v: dx[%d] = %v, want %v", g.height, g.width, ceil, i, l.dx[i], wantMax[i])
				}
			}
			l.method = caffepb.PoolingParameter_AVE
			for i := range l.x {
				l.x[i] = float32(rng.NormFloat64())
			}
			l.forwardPlanes(0, 0, n)
			l.backwardPlanes(0, 0, n)
			wantY, wantDx := make([]float32, n*out), make([]float32, n*in)
			for p := range n {
				avePoolPlane(&g, l.x[p*in:(p+1)*in], wantY[p*out:(p+1)*out])
				dx := wantDx[p*in : (p+1)*in]
				for ph := range g.pooledH {
					for pw := range g.pooledW {
						h0, h1, w0, w1, size := g.window(ph, pw)
						d := l.dy[p*out+ph*g.pooledW+pw] / float32(size)
						for h := h0; h < h1; h++ {
							for w := w0; w < w1; w++ {
								dx[h*g.width+w] += d
							}
						}
					}
				}
			}
			for i := range wantY {
				if math.Float32bits(l.y[i]) != math.Float32bits(wantY[i]) {
					t.Fatalf("%dx%d ceil %v: y[%d] = %v, want %v", g.height, g.width, ceil, i, l.y[i], wantY[i])
				}
			}
			for i := range wantDx {
				if math.Float32bits(l.dx[i]) != math.Float32bits(wantDx[i]) {
					t.Fatalf("%dx%d ceil %v: dx[%d] = %v, want %v", g.height, g.width, ceil, i, l.dx[i], wantDx[i])
				}
			}
		}
	}
}
