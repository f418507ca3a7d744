package utility_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	_ "github.com/gocaffe/gocaffe/layer/neuron" // the ReLU after the sum
)

// The host's Eltwise SUM with the zero-slope ReLU in place on its top
// fused into it leaves the top's data and diff and the bottoms' gradients
// as the two layers' own passes do, bit for bit (the top's diff is the
// ReLU's gradient, as after Caffe's in-place ReLU): coefficients 1 and others, a
// bottom without a gradient, values at and around zero and the odd ones
// (NaN, infinities), on shapes spread over the cores with a short last
// block and not.
func TestEltwiseReLUFusedHostMatchesUnfused(t *testing.T) {
	for _, shape := range [][]int{{3, 7, 41, 53}, {2, 3, 5, 7}} {
		for _, coeffs := range [][2]float32{{1, 1}, {0.5, -2}, {0, 1}} {
			for _, down := range [][]bool{{true, true}, {false, true}} {
				want := runEltwiseReLU(t, shape, coeffs, down, false)
				got := runEltwiseReLU(t, shape, coeffs, down, true)
				for i := range want {
					for j, v := range got[i] {
						w := want[i][j]
						if math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
							t.Fatalf("%v coeffs %v down %v: array %d [%d] = %v, unfused %v", shape, coeffs, down, i, j, v, w)
						}
					}
				}
			}
		}
	}
}

// runEltwiseReLU runs a forward and a backward pass of a sum of two
// bottoms and a ReLU in place on its top, fused or not, and returns the
// top's data and diff and the bottoms' diffs.
func runEltwiseReLU(t *testing.T, shape []int, coeffs [2]float32, down []bool, fuse bool) [][]float32 {
	t.Helper()
	sum := layertest.New[float32](t, fmt.Sprintf(`type: "Eltwise" eltwise_param { operation: SUM coeff: %v coeff: %v }`, coeffs[0], coeffs[1]))
	relu := layertest.New[float32](t, `type: "ReLU"`)
	var bottoms []*blob.Blob[float32]
	for k := range 2 {
		b := layertest.Blob[float32](t, shape...)
		layertest.FillGaussian(b, 0, 1, uint64(k+1))
		x := b.MutableCPUData()
		x[k*50] = float32(math.NaN())
		x[k*50+1] = float32(math.Inf(1 - 2*k))
		x[k*50+2], x[k*50+3] = 0, float32(math.Copysign(0, -1))
		bottoms = append(bottoms, b)
	}
	y := layertest.Blob[float32](t)
	tops := []*blob.Blob[float32]{y}
	layertest.SetUp(t, sum, bottoms, tops)
	layertest.SetUp(t, relu, tops, tops)
	if fuse && !layer.Fuse(sum, relu, tops, tops, tops, true) {
		t.Fatal("the ReLU was not fused")
	}
	for _, l := range []layer.Layer[float32]{sum, relu} {
		b := tops
		if l == sum {
			b = bottoms
		}
		if _, err := layer.Forward(l, b, tops); err != nil {
			t.Fatal(err)
		}
	}
	g := layertest.Blob[float32](t, shape...)
	layertest.FillGaussian(g, 0, 1, 9)
	dy := y.MutableCPUDiff()
	copy(dy, g.CPUData())
	dy[7], dy[8] = float32(math.Inf(1)), float32(math.NaN())
	for _, l := range []layer.Layer[float32]{relu, sum} {
		b := tops
		prop := []bool{true}
		if l == sum {
			b, prop = bottoms, down
		}
		if err := layer.Backward(l, tops, prop, b); err != nil {
			t.Fatal(err)
		}
	}
	out := [][]float32{y.CPUData(), y.CPUDiff()}
	for k, b := range bottoms {
		if down[k] {
			out = append(out, b.CPUDiff())
		}
	}
	return out
}

// TestSplitBackwardAcrossCores holds the host's Split backward pass, block
// by block on the cores, to splitBackward's sums (the first two tops'
// diffs added, then each further one), bit for bit, for one, two and three
// tops on a shape with a short last block.
func TestSplitBackwardAcrossCores(t *testing.T) {
	shape := []int{3, 7, 41, 53}
	for tops := 1; tops <= 3; tops++ {
		l := layertest.New[float32](t, `type: "Split"`)
		x := layertest.Blob[float32](t, shape...)
		ys := layertest.Blobs[float32](t, tops)
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, ys)
		for k, y := range ys {
			g := layertest.Blob[float32](t, shape...)
			layertest.FillGaussian(g, 0, 1, uint64(k+3))
			copy(y.MutableCPUDiff(), g.CPUData())
		}
		layertest.Backward(t, l, ys, []bool{true}, []*blob.Blob[float32]{x})
		for i, got := range x.CPUDiff() {
			want := ys[0].CPUDiff()[i]
			if tops > 1 {
				want += ys[1].CPUDiff()[i]
			}
			if tops > 2 {
				want += float32(1 * ys[2].CPUDiff()[i])
			}
			if got != want {
				t.Fatalf("%d tops: dx[%d] = %v, want %v", tops, i, got, want)
			}
		}
	}
}
