package vision

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// A float32 3x3 pooling of stride 2 without padding (mathfn's
// MaxPool3x3S2, AvePool3x3S2 and their gradients where the CPU has them)
// gives Caffe's loops' results bit for bit through the layer's passes,
// over several planes on the cores, with the last windows clipped (CEIL)
// or not: AVE's sums, divisions and accumulated gradients; MAX's
// gradient, the sums of dy over the argmaxes of its mask top (its values
// and argmaxes: TestMaxPoolSpecialValues).
func TestPool3x3S2Planes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, hw := range [][2]int{{16, 16}, {8, 8}, {9, 11}, {5, 40}} {
		for _, round := range []string{"CEIL", "FLOOR"} {
			shape := []int{2, 3, hw[0], hw[1]}
			name := fmt.Sprint(hw, round)
			pass := func(method string, tops int, fill func() float32) (*poolingLayer[float32], []float32, []*blob.Blob[float32]) {
				l := layertest.New[float32](t, `type: "Pooling" pooling_param { pool: `+method+` kernel_size: 3 stride: 2 round_mode: `+round+` }`)
				x := layertest.Blob[float32](t, shape...)
				for i := range x.Count() {
					x.MutableCPUData()[i] = fill()
				}
				top := layertest.Blobs[float32](t, tops)
				layertest.SetUp(t, l, []*blob.Blob[float32]{x}, top)
				layertest.Forward(t, l, []*blob.Blob[float32]{x}, top)
				for i := range top[0].Count() {
					top[0].MutableCPUDiff()[i] = float32(rng.NormFloat64())
				}
				copy(x.MutableCPUDiff(), x.CPUData()) // stale values: the pass overwrites them
				layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float32]{x})
				return l.(*poolingLayer[float32]), append([]float32(nil), x.CPUData()...), append(top, x)
			}
			// MAX: values from a few, so that windows share their argmax.
			l, _, blobs := pass("MAX", 2, func() float32 { return float32(rng.IntN(5)) })
			n, in, out := l.planes()
			mask, dy, dx := blobs[1].CPUData(), blobs[0].CPUDiff(), blobs[2].CPUDiff()
			want := make([]float32, n*in)
			for o, i := range mask {
				want[o/out*in+int(i)] += dy[o]
			}
			sameBits32(t, "MAX "+name+" dx", dx, want)
			l, x, blobs := pass("AVE", 1, func() float32 { return float32(rng.NormFloat64()) })
			g := &l.poolGeom
			y, dy, dx := blobs[0].CPUData(), blobs[0].CPUDiff(), blobs[1].CPUDiff()
			wantY, wantDx := make([]float32, n*out), make([]float32, n*in)
			for p := range n {
				avePoolPlane(g, x[p*in:(p+1)*in], wantY[p*out:(p+1)*out])
				for ph := range g.pooledH {
					for pw := range g.pooledW {
						h0, h1, w0, w1, size := g.window(ph, pw)
						d := dy[p*out+ph*g.pooledW+pw] / float32(size)
						for h := h0; h < h1; h++ {
							for w := w0; w < w1; w++ {
								wantDx[p*in+h*g.width+w] += d
							}
						}
					}
				}
			}
			sameBits32(t, "AVE "+name+" y", y, wantY)
			sameBits32(t, "AVE "+name+" dx", dx, wantDx)
		}
	}
}

// sameBits32 fails the test unless got and want hold the same bits.
func sameBits32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
