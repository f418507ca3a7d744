package normalization

import (
	"fmt"
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

// TestLRNInferenceOnly: the inference pass (SetInferenceOnly) sums each
// window's squares as the training pass does and takes the output from
// the sum in float32 (mathfn.LRNScale): its values are the element-by-
// element float32 formula's bit for bit, and within a few ulp of the
// training pass's, over windows clipped at both ends, a window of one
// plane, and planes split over the cores mid-image (a batch of two, many
// channels). Betas without a float32 form keep the training pass.
func TestLRNInferenceOnly(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
		fast  bool
	}{
		{"local_size: 5 alpha: 0.0001 beta: 0.75", []int{1, 9, 11, 13}, true},
		{"local_size: 5 alpha: 0.0001 beta: 0.75", []int{2, 37, 7, 5}, true},
		{"local_size: 3 alpha: 0.5 beta: 0.5 k: 2", []int{2, 4, 5, 3}, true},
		{"local_size: 1 alpha: 2 beta: 1", []int{1, 3, 8, 8}, true},
		{"local_size: 7 alpha: 2 beta: 1", []int{1, 3, 8, 8}, true},
		{"local_size: 3 alpha: 0.5 beta: 0.6 k: 2", []int{1, 4, 5, 3}, false},
	} {
		l := layertest.New[float32](t, `type: "LRN" lrn_param { `+c.param+` }`)
		x, y := layertest.Blob[float32](t, c.shape...), layertest.Blob[float32](t)
		rng := rand.New(rand.NewPCG(7, 8))
		for i := range x.MutableCPUData() {
			x.MutableCPUData()[i] = float32(rng.NormFloat64() * 3)
		}
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		train := append([]float32(nil), y.CPUData()...)
		lrn := l.(*lrnLayer[float32])
		lrn.SetInferenceOnly(true)
		if lrn.infer != c.fast {
			t.Fatalf("%s: the inference pass is taken: %v, want %v", c.param, lrn.infer, c.fast)
		}
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		sumFactor, constant, _ := lrn.coeffs()
		num, ch, plane := c.shape[0], c.shape[1], c.shape[2]*c.shape[3]
		xs := x.CPUData()
		for n := range num {
			for k := range ch {
				for i := range plane {
					at := (n*ch+k)*plane + i
					got := y.CPUData()[at]
					if d := math.Abs(float64(got - train[at])); d > 1e-6*math.Abs(float64(train[at])) {
						t.Fatalf("%s %v: y[%d] = %v, the training pass's %v", c.param, c.shape, at, got, train[at])
					}
					if !c.fast {
						continue
					}
					var s float32
					for cc := max(k-lrn.half(), 0); cc <= min(k+lrn.half(), ch-1); cc++ {
						v := xs[(n*ch+cc)*plane+i]
						s += float32(v * v)
					}
					sc := float32(sumFactor*s) + constant
					d := sc
					switch lrn.beta {
					case 0.75:
						r := float32(math.Sqrt(float64(sc)))
						d = r * float32(math.Sqrt(float64(r)))
					case 0.5:
						d = float32(math.Sqrt(float64(sc)))
					}
					if want := xs[at] / d; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %v: y[%d] = %v, want %v", c.param, c.shape, at, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkLRN times GoogLeNet's conv2/norm2 (192 x 56 x 56) and
// pool1/norm1 (64 x 56 x 56) at batch 1, the training pass against the
// inference one:
//
//	GOMAXPROCS=2 go test ./layer/normalization/ -run X -bench LRN
func BenchmarkLRN(b *testing.B) {
	for _, ch := range []int{192, 64} {
		for _, infer := range []bool{false, true} {
			b.Run(fmt.Sprintf("googlenet_%d_56/infer=%v", ch, infer), func(b *testing.B) {
				l := layertest.New[float32](b, `type: "LRN" lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }`)
				x, y := layertest.Blob[float32](b, 1, ch, 56, 56), layertest.Blob[float32](b)
				layertest.FillGaussian(x, 0, 1, 3)
				layertest.SetUp(b, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
				l.(*lrnLayer[float32]).SetInferenceOnly(infer)
				for b.Loop() {
					layertest.Forward(b, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
				}
			})
		}
	}
}

// TestLRNAcrossBackwardVectorBitForBit: the whole-plane vector steps of
// the ACROSS_CHANNELS backward pass give the element-by-element formula
// bit for bit (dy*y rounded, then /scale; each window's sum of the ratios
// in ascending channel order; dy*pw - (backFactor*x)*sum, each product
// rounded before the difference), at planes whose sizes are not multiples
// of the vector width, windows clipped at both ends, batches of one and
// three (images split over the cores).
func TestLRNAcrossBackwardVectorBitForBit(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"local_size: 5 alpha: 0.0001 beta: 0.75", []int{1, 9, 11, 13}},
		{"local_size: 3 alpha: 0.5 beta: 0.6 k: 2", []int{3, 4, 5, 3}},
		{"local_size: 7 alpha: 2 beta: 1", []int{1, 3, 8, 8}},
	} {
		l := layertest.New[float32](t, `type: "LRN" lrn_param { `+c.param+` }`)
		x, y := layertest.Blob[float32](t, c.shape...), layertest.Blob[float32](t)
		rng := rand.New(rand.NewPCG(7, 8))
		for i := range x.MutableCPUData() {
			x.MutableCPUData()[i] = float32(rng.NormFloat64() * 3)
		}
		bottom, top := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y}
		layertest.SetUp(t, l, bottom, top)
		layertest.Forward(t, l, bottom, top)
		for i := range y.MutableCPUDiff() {
			y.MutableCPUDiff()[i] = float32(rng.NormFloat64())
		}
		if err := l.BackwardCPU(top, []bool{true}, bottom); err != nil {
			t.Fatal(err)
		}
		lrn := l.(*lrnLayer[float32])
		_, _, backFactor := lrn.coeffs()
		num, ch, plane := c.shape[0], c.shape[1], c.shape[2]*c.shape[3]
		xs, ys, dys := x.CPUData(), y.CPUData(), y.CPUDiff()
		scale, pw := lrn.scale.CPUData(), lrn.pw.CPUData()
		ratio := func(j int) float32 { return float32(dys[j]*ys[j]) / scale[j] }
		for n := range num {
			for k := range ch {
				for i := range plane {
					var s float32
					for cc := max(k-lrn.half(), 0); cc <= min(k+lrn.half(), ch-1); cc++ {
						s += ratio((n*ch+cc)*plane + i)
					}
					at := (n*ch+k)*plane + i
					want := float32(dys[at]*pw[at]) - float32(float32(backFactor*xs[at])*s)
					if got := x.CPUDiff()[at]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %v: dx[%d] = %v, want %v", c.param, c.shape, at, got, want)
					}
				}
			}
		}
	}
}
