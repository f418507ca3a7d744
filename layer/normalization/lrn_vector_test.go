package normalization

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// TestLRNAcrossVectorBitForBit: the whole-plane vector steps of the
// float32 ACROSS_CHANNELS pass give what the element-by-element loops
// give, bit for bit (each product rounded before its sum), at planes
// whose sizes are not multiples of the vector width, windows clipped at
// both ends, and a batch of one and of two.
func TestLRNAcrossVectorBitForBit(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"local_size: 5 alpha: 0.0001 beta: 0.75", []int{1, 9, 11, 13}},
		{"local_size: 3 alpha: 0.5 beta: 0.6 k: 2", []int{2, 4, 5, 3}},
		{"local_size: 7 alpha: 2 beta: 1", []int{1, 3, 8, 8}},
	} {
		l := layertest.New[float32](t, `type: "LRN" lrn_param { `+c.param+` }`)
		x, y := layertest.Blob[float32](t, c.shape...), layertest.Blob[float32](t)
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range x.MutableCPUData() {
			x.MutableCPUData()[i] = float32(rng.NormFloat64() * 3)
		}
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		lrn := l.(*lrnLayer[float32])
		sumFactor, constant, _ := lrn.coeffs()
		num, ch, plane := c.shape[0], c.shape[1], c.shape[2]*c.shape[3]
		xs := x.CPUData()
		for n := range num {
			for k := range ch {
				for i := range plane {
					var s float32
					for cc := max(k-lrn.half(), 0); cc <= min(k+lrn.half(), ch-1); cc++ {
						v := xs[(n*ch+cc)*plane+i]
						s += float32(v * v) // float32(): rounded, never fused
					}
					at := (n*ch+k)*plane + i
					want := xs[at] * float32(negPow(float64(constant+float32(sumFactor*s)), float64(lrn.beta)))
					if got := y.CPUData()[at]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %v: y[%d] = %v, want %v", c.param, c.shape, at, got, want)
					}
				}
			}
		}
	}
}
