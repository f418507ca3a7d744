package neuron_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "ReLU", Layer: `type: "ReLU" bottom: "x" top: "y"`, Bottom: [][]int{{2, 3, 4, 5}},
			Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01},
		layertest.GradCase{Name: "ReLU/leaky", Layer: `type: "ReLU" bottom: "x" top: "y" relu_param { negative_slope: 0.01 }`,
			Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Eltwise, Kink: 0, KinkRange: 0.01},
	)
	cases.AddParity(layertest.Parity{Layer: `type: "ReLU" bottom: "x" top: "y" relu_param { negative_slope: 0.1 }`, Bottom: [][]int{{2, 3, 40, 50}}})
}

func TestReLUForward(t *testing.T) {
	for _, slope := range []float64{0, 0.25} {
		l := layertest.New[float64](t, `type: "ReLU" relu_param { negative_slope: `+strings.TrimSpace(layertest.Ftoa(slope))+` }`)
		x := layertest.Blob[float64](t, 2, 3, 4, 5)
		layertest.FillGaussian(x, 0, 1, 1)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		for i, v := range x.CPUData() {
			want := v
			if v <= 0 {
				want = slope * v
			}
			if y.CPUData()[i] != want {
				t.Fatalf("slope %v: y[%d] = %v, want %v", slope, i, y.CPUData()[i], want)
			}
		}
	}
}

func TestReLUInPlace(t *testing.T) {
	l := layertest.New[float32](t, `type: "ReLU"`)
	x := layertest.Blob[float32](t, 10)
	copy(x.MutableCPUData(), []float32{-2, -1, 0, 1, 2, -3, 3, -0.5, 0.5, 4})
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{x})
	layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{x})
	want := []float32{0, 0, 0, 1, 2, 0, 3, 0, 0.5, 4}
	layertest.CheckClose(t, "in-place ReLU", x.CPUData(), want, 0)
}

func TestBlobCountErrorsNameTheLayer(t *testing.T) {
	l := layertest.New[float32](t, `name: "relu7" type: "ReLU"`)
	a, b := layertest.Blob[float32](t, 3), layertest.Blob[float32](t, 3)
	err := layer.SetUp(l, []*blob.Blob[float32]{a, b}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
	if err == nil || !strings.Contains(err.Error(), `layer "relu7" (ReLU)`) || !strings.Contains(err.Error(), "takes 1 bottom blob(s), got 2") {
		t.Errorf("err = %v", err)
	}
}

// caffeReLU is Caffe's CPU formula with std::max and std::min, which
// return their first argument unless the second compares larger (smaller),
// in T's arithmetic.
func caffeReLU[T float32 | float64](x, slope T) T {
	mx, mn := x, x
	if x < 0 {
		mx = 0
	}
	if 0 < x {
		mn = 0
	}
	return mx + slope*mn
}

// TestReLUSpecialValues holds the forward pass to Caffe's CPU formula, to
// the sign of zero, on zeros of both signs, infinities (0 * -Inf is NaN),
// NaN, denormals and the extremes, for slopes zero, positive and negative,
// in both precisions.
func TestReLUSpecialValues(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(),
		math.MaxFloat32, -math.MaxFloat32, 1e-45, -1e-45, 3.5, -2.25}
	// Three times over, so that whole vectors of 16 float32 or 8 float64
	// values (the AVX-512 kernel) and a remainder both see every value.
	values = slices.Concat(values, values, values)
	for _, slope := range []float32{0, 0.1, -0.2} {
		text := `type: "ReLU" relu_param { negative_slope: ` + strings.TrimSpace(layertest.Ftoa(float64(slope))) + ` }`
		l := layertest.New[float64](t, text)
		x := layertest.Blob[float64](t, len(values))
		copy(x.MutableCPUData(), values)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		for i, v := range values {
			checkReLU(t, "float64", slope, v, y.CPUData()[i], caffeReLU(v, float64(slope)))
		}

		l32 := layertest.New[float32](t, text)
		x32 := layertest.Blob[float32](t, len(values))
		for i, v := range values {
			x32.MutableCPUData()[i] = float32(v)
		}
		y32 := layertest.Blob[float32](t)
		layertest.SetUp(t, l32, []*blob.Blob[float32]{x32}, []*blob.Blob[float32]{y32})
		layertest.Forward(t, l32, []*blob.Blob[float32]{x32}, []*blob.Blob[float32]{y32})
		for i, v := range x32.CPUData() {
			checkReLU(t, "float32", slope, float64(v), float64(y32.CPUData()[i]), float64(caffeReLU(v, slope)))
		}
	}
}

// checkReLU compares one value bit for bit (any NaN for a NaN).
func checkReLU(t *testing.T, name string, slope float32, x, got, want float64) {
	t.Helper()
	if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
		t.Errorf("%s slope %v: ReLU(%v) = %v, want %v", name, slope, x, got, want)
	}
}

// TestReLUBackwardSpecialValues holds the gradient to Caffe's
// dy * ((x > 0) + slope * (x <= 0)) where x is NaN (neither: dy * 0), a
// zero of either sign, or infinite, and dy is infinite or NaN.
func TestReLUBackwardSpecialValues(t *testing.T) {
	xs := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 2, -2, 1e-300}
	dys := []float64{1, -1, math.Inf(1), math.NaN(), 0.5, -3, math.Inf(-1), 7}
	for _, slope := range []float32{0, 0.1} {
		l := layertest.New[float64](t, `type: "ReLU" relu_param { negative_slope: `+strings.TrimSpace(layertest.Ftoa(float64(slope)))+` }`)
		x, y := layertest.Blob[float64](t, len(xs)), layertest.Blob[float64](t)
		copy(x.MutableCPUData(), xs)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		copy(y.MutableCPUDiff(), dys)
		layertest.Backward(t, l, []*blob.Blob[float64]{y}, []bool{true}, []*blob.Blob[float64]{x})
		for i, v := range xs {
			var pos, nonpos float64
			if v > 0 {
				pos = 1
			}
			if v <= 0 {
				nonpos = 1
			}
			checkReLU(t, "gradient", slope, v, x.CPUDiff()[i], dys[i]*(pos+float64(slope)*nonpos))
		}
	}
}

// A blob large enough to be spread over the cores (an odd count, so the
// parts are uneven), in place and not: every element as the formula says.
func TestReLUAcrossCores(t *testing.T) {
	for _, slope := range []float32{0, 0.25} {
		for _, inPlace := range []bool{false, true} {
			l := layertest.New[float32](t, `type: "ReLU" relu_param { negative_slope: `+strings.TrimSpace(layertest.Ftoa(float64(slope)))+` }`)
			x := layertest.Blob[float32](t, 3, 7, 41, 53)
			layertest.FillGaussian(x, 0, 1, 3)
			xs := append([]float32(nil), x.CPUData()...)
			y := x
			if !inPlace {
				y = layertest.Blob[float32](t)
			}
			layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			for i, v := range xs {
				want := v
				if v <= 0 {
					want = slope * v
				}
				if got := y.CPUData()[i]; got != want {
					t.Fatalf("slope %v, in place %v: y[%d] = %v, want %v", slope, inPlace, i, got, want)
				}
			}
			if inPlace {
				continue // the backward pass would read y as x
			}
			dy := y.MutableCPUDiff()
			for i := range dy {
				dy[i] = float32(i%7) - 3
			}
			layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
			for i, v := range xs {
				want := dy[i]
				if v <= 0 {
					want = dy[i] * slope
				}
				if got := x.CPUDiff()[i]; got != want {
					t.Fatalf("slope %v: dx[%d] = %v, want %v", slope, i, got, want)
				}
			}
		}
	}
}

// TestReLUBackwardSpecialValuesFloat32 is TestReLUBackwardSpecialValues
// in float32 over every pair of x and dy (enough values for the vector
// kernel, AVX2's where the CPU lacks AVX-512, and a remainder), slopes
// zero, positive and negative, bit for bit.
func TestReLUBackwardSpecialValuesFloat32(t *testing.T) {
	specials := []float32{float32(math.NaN()), 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 2, -2, 1e-45, -3.5}
	var xs, dys []float32
	for _, x := range specials {
		for _, dy := range specials {
			xs, dys = append(xs, x), append(dys, dy)
		}
	}
	for _, slope := range []float32{0, 0.1, -0.2} {
		l := layertest.New[float32](t, `type: "ReLU" relu_param { negative_slope: `+strings.TrimSpace(layertest.Ftoa(float64(slope)))+` }`)
		x, y := layertest.Blob[float32](t, len(xs)), layertest.Blob[float32](t)
		copy(x.MutableCPUData(), xs)
		layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
		copy(y.MutableCPUDiff(), dys)
		layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
		for i, v := range xs {
			var pos, nonpos float32
			if v > 0 {
				pos = 1
			}
			if v <= 0 {
				nonpos = 1
			}
			want := dys[i] * (pos + slope*nonpos)
			got := x.CPUDiff()[i]
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Errorf("slope %v: gradient at x=%v dy=%v = %v, want %v", slope, v, dys[i], got, want)
			}
		}
	}
}
