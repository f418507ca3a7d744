package utility_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// eltwiseUniform fills the gradient cases' bottoms from U(0, 1), as Caffe's
// test_eltwise_layer does.
func eltwiseUniform(i int, b *blob.Blob[float64]) { layertest.FillUniform(b, 0, 1, uint64(70+i)) }

func init() {
	three := `type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "d" `
	shapes := [][]int{{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}
	cases.AddGrad(
		layertest.GradCase{Name: "Eltwise/sum", Layer: three + `eltwise_param { operation: SUM }`,
			Bottom: shapes, Fill: eltwiseUniform, Mode: layertest.Eltwise},
		layertest.GradCase{Name: "Eltwise/sum/coeff", Layer: three + `eltwise_param { operation: SUM coeff: 1 coeff: -0.5 coeff: 2 }`,
			Bottom: shapes, Fill: eltwiseUniform, Mode: layertest.Eltwise},
		layertest.GradCase{Name: "Eltwise/prod/stable", Layer: three + `eltwise_param { operation: PROD stable_prod_grad: true }`,
			Bottom: shapes, Fill: eltwiseUniform, Mode: layertest.Eltwise},
		layertest.GradCase{Name: "Eltwise/prod/unstable", Layer: three + `eltwise_param { operation: PROD stable_prod_grad: false }`,
			Bottom: shapes, Fill: eltwiseUniform, Mode: layertest.Eltwise},
		// Caffe checks MAX with step 1e-4 and threshold 1e-2.
		layertest.GradCase{Name: "Eltwise/max", Layer: three + `eltwise_param { operation: MAX }`,
			Bottom: shapes, Fill: eltwiseUniform, Mode: layertest.Eltwise, Step: 1e-4, Threshold: 1e-2},
		layertest.GradCase{Name: "Eltwise/sum/two/exhaustive", Layer: `type: "Eltwise" bottom: "a" bottom: "b" top: "d" eltwise_param { coeff: 0.5 coeff: -3 }`,
			Bottom: [][]int{{2, 3, 2}, {2, 3, 2}}},
	)
	big := [][]int{{4, 5, 20, 17}, {4, 5, 20, 17}, {4, 5, 20, 17}}
	cases.AddParity(
		layertest.Parity{Layer: three + `eltwise_param { coeff: 1 coeff: -0.5 coeff: 2 }`, Bottom: big},
		layertest.Parity{Layer: `type: "Eltwise" bottom: "a" bottom: "b" top: "d"`, Bottom: big[:2]},
		layertest.Parity{Layer: three + `eltwise_param { operation: PROD }`, Bottom: big},
		layertest.Parity{Layer: three + `eltwise_param { operation: PROD stable_prod_grad: false }`, Bottom: big, Lo: 0.5, Hi: 2},
		layertest.Parity{Layer: three + `eltwise_param { operation: MAX }`, Bottom: big},
		// Values on a coarse grid tie often: both halves must pick the same
		// winner.
		layertest.Parity{Layer: `type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" bottom: "e" top: "d" eltwise_param { operation: MAX }`,
			Bottom: append(big, big[0]), Fill: layertest.QuantizedFill(3)},
	)
}

// eltwiseRun sets up the three-bottom layer on uniform bottoms and runs it
// forward.
func eltwiseRun(t *testing.T, param string) (bottom []*blob.Blob[float64], top *blob.Blob[float64], run func(dy []float64)) {
	t.Helper()
	l := layertest.New[float64](t, `type: "Eltwise" `+param)
	for i := range 3 {
		b := layertest.Blob[float64](t, 2, 3, 4, 5)
		eltwiseUniform(i, b)
		bottom = append(bottom, b)
	}
	top = layertest.Blob[float64](t)
	layertest.SetUp(t, l, bottom, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, bottom, []*blob.Blob[float64]{top})
	return bottom, top, func(dy []float64) {
		copy(top.MutableCPUDiff(), dy)
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(3), bottom)
	}
}

func eltwiseRamp(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Cos(float64(i))
	}
	return v
}

func TestEltwiseSum(t *testing.T) {
	for _, c := range []struct {
		param  string
		coeffs []float64
	}{
		{`eltwise_param { operation: SUM }`, []float64{1, 1, 1}},
		{``, []float64{1, 1, 1}},
		{`eltwise_param { operation: SUM coeff: 1 coeff: -0.5 coeff: 2 }`, []float64{1, -0.5, 2}},
	} {
		bottom, top, backward := eltwiseRun(t, c.param)
		layertest.CheckShape(t, c.param, top, 2, 3, 4, 5)
		want := make([]float64, top.Count())
		for i, b := range bottom {
			for j, v := range b.CPUData() {
				want[j] += c.coeffs[i] * v
			}
		}
		layertest.CheckClose(t, "sum "+c.param, top.CPUData(), want, 1e-15)
		dy := eltwiseRamp(top.Count())
		backward(dy)
		for i, b := range bottom {
			for j, v := range b.CPUDiff() {
				if v != c.coeffs[i]*dy[j] {
					t.Fatalf("%s: bottom %d diff[%d] = %v, want %v", c.param, i, j, v, c.coeffs[i]*dy[j])
				}
			}
		}
	}
}

func TestEltwiseProd(t *testing.T) {
	for _, param := range []string{`eltwise_param { operation: PROD }`, `eltwise_param { operation: PROD stable_prod_grad: false }`} {
		bottom, top, backward := eltwiseRun(t, param)
		a, b, c := bottom[0].CPUData(), bottom[1].CPUData(), bottom[2].CPUData()
		for j, v := range top.CPUData() {
			if v != a[j]*b[j]*c[j] {
				t.Fatalf("%s: top[%d] = %v, want %v", param, j, v, a[j]*b[j]*c[j])
			}
		}
		dy := eltwiseRamp(top.Count())
		backward(dy)
		others := [][2][]float64{{b, c}, {a, c}, {a, b}}
		for i, bl := range bottom {
			want := make([]float64, len(dy))
			for j := range want {
				want[j] = others[i][0][j] * others[i][1][j] * dy[j]
			}
			layertest.CheckClose(t, param+" bottom "+strconv.Itoa(i)+" diff", bl.CPUDiff(), want, 1e-12)
		}
	}
}

func TestEltwiseMax(t *testing.T) {
	bottom, top, backward := eltwiseRun(t, `eltwise_param { operation: MAX }`)
	dy := eltwiseRamp(top.Count())
	backward(dy)
	for j, v := range top.CPUData() {
		want, winner := math.Inf(-1), -1
		for i, b := range bottom {
			if b.CPUData()[j] > want {
				want, winner = b.CPUData()[j], i
			}
		}
		if v != want {
			t.Fatalf("top[%d] = %v, want %v", j, v, want)
		}
		for i, b := range bottom {
			g := 0.0
			if i == winner {
				g = dy[j]
			}
			if b.CPUDiff()[j] != g {
				t.Fatalf("bottom %d diff[%d] = %v, want %v", i, j, b.CPUDiff()[j], g)
			}
		}
	}
}

// TestEltwiseMaxTies pins Caffe's tie rule: between bottoms 0 and 1 the tie
// goes to bottom 1; a later bottom must be strictly greater to win.
func TestEltwiseMaxTies(t *testing.T) {
	l := layertest.New[float64](t, `type: "Eltwise" eltwise_param { operation: MAX }`)
	data := [][]float64{
		{1, 2, 3, 0},
		{1, 1, 3, 5},
		{0, 2, 3, 5},
	}
	var bottom []*blob.Blob[float64]
	for _, d := range data {
		b := layertest.Blob[float64](t, 4)
		copy(b.MutableCPUData(), d)
		bottom = append(bottom, b)
	}
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, bottom, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "max with ties", top.CPUData(), []float64{1, 2, 3, 5}, 0)
	copy(top.MutableCPUDiff(), []float64{10, 20, 30, 40})
	layertest.Backward(t, l, []*blob.Blob[float64]{top}, layertest.AllTrue(3), bottom)
	layertest.CheckClose(t, "bottom 0 diff", bottom[0].CPUDiff(), []float64{0, 20, 0, 0}, 0)
	layertest.CheckClose(t, "bottom 1 diff", bottom[1].CPUDiff(), []float64{10, 0, 30, 40}, 0)
	layertest.CheckClose(t, "bottom 2 diff", bottom[2].CPUDiff(), []float64{0, 0, 0, 0}, 0)
}

func TestEltwiseErrors(t *testing.T) {
	s := [][]int{{2, 3}, {2, 3}, {2, 3}}
	layertest.ExpectSetUpError(t, `type: "Eltwise" eltwise_param { coeff: 1 coeff: 2 }`, s, 1, "one coefficient per bottom", "2 coefficients for 3 bottoms")
	layertest.ExpectSetUpError(t, `type: "Eltwise" eltwise_param { operation: PROD coeff: 1 coeff: 2 coeff: 3 }`, s, 1, "only supported by operation SUM")
	layertest.ExpectSetUpError(t, `type: "Eltwise"`, [][]int{{2, 3}, {2, 3}, {3, 2}}, 1, "same shape", "bottom 0 has shape 2 3", "bottom 2 has shape 3 2")
	layertest.ExpectSetUpError(t, `type: "Eltwise" eltwise_param { operation: MAX }`, [][]int{{2, 3, 1}, {2, 3}}, 1, "same shape")
	layertest.ExpectSetUpError(t, `type: "Eltwise"`, [][]int{{2, 3}}, 1, "takes at least 2 bottom")
}

// TestEltwiseMaxAcceptsCoeff pins Caffe's behaviour: only PROD rejects
// coefficients; MAX accepts one per bottom and ignores them.
func TestEltwiseMaxAcceptsCoeff(t *testing.T) {
	bottom, top, _ := eltwiseRun(t, `eltwise_param { operation: MAX coeff: 2 coeff: 3 coeff: 4 }`)
	for j, v := range top.CPUData() {
		if want := max(bottom[0].CPUData()[j], bottom[1].CPUData()[j], bottom[2].CPUData()[j]); v != want {
			t.Fatalf("top[%d] = %v, want the plain maximum %v", j, v, want)
		}
	}
}

// SUM over a top large enough to be spread over the cores in blocks (an
// uneven last block): each element as scal and axpy compute it, a
// coefficient 0 dropping its bottom (NaNs included), as BLAS does.
func TestEltwiseSumAcrossCores(t *testing.T) {
	shape := []int{3, 7, 41, 53}
	for _, coeffs := range [][]float32{{1, 1, 1}, {1, -0.5, 0}, {0, 2, 1}} {
		l := layertest.New[float32](t, fmt.Sprintf(`type: "Eltwise" eltwise_param { operation: SUM coeff: %v coeff: %v coeff: %v }`, coeffs[0], coeffs[1], coeffs[2]))
		var bottoms []*blob.Blob[float32]
		for k := range 3 {
			b := layertest.Blob[float32](t, shape...)
			layertest.FillGaussian(b, 0, 1, uint64(k+1))
			b.MutableCPUData()[k*1000] = float32(math.NaN())
			bottoms = append(bottoms, b)
		}
		y := layertest.Blob[float32](t)
		layertest.SetUp(t, l, bottoms, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, bottoms, []*blob.Blob[float32]{y})
		for i, got := range y.CPUData() {
			var want float32
			if coeffs[0] != 0 {
				want = coeffs[0] * bottoms[0].CPUData()[i]
			}
			for k := 1; k < 3; k++ {
				if coeffs[k] != 0 {
					want += float32(coeffs[k] * bottoms[k].CPUData()[i])
				}
			}
			if got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
				t.Fatalf("coefficients %v: y[%d] = %v, want %v", coeffs, i, got, want)
			}
		}
	}
}
