package normalization_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	const lrn = `type: "LRN" bottom: "x" top: "y" lrn_param { %s }`
	// Caffe's test_lrn_layer: bottom 2x7x3x3, GradientChecker(1e-2, 1e-2),
	// exhaustive.
	bottom := [][]int{{2, 7, 3, 3}}
	for _, param := range []string{
		"",
		"local_size: 15",
		"local_size: 3 alpha: 0.5 beta: 0.6 k: 2",
		"norm_region: WITHIN_CHANNEL local_size: 3",
		"norm_region: WITHIN_CHANNEL local_size: 5 alpha: 2 beta: 0.5",
	} {
		cases.AddGrad(layertest.GradCase{Name: "LRN/" + param, Layer: fmt.Sprintf(lrn, param), Bottom: bottom, Step: 1e-2, Threshold: 1e-2})
	}
	big := [][]int{{4, 8, 13, 11}}
	cases.AddParity(
		layertest.Parity{Layer: fmt.Sprintf(lrn, ""), Bottom: big, Lo: -2, Hi: 2},
		layertest.Parity{Layer: fmt.Sprintf(lrn, "local_size: 3 alpha: 0.1 beta: 0.6 k: 2"), Bottom: big, Lo: -2, Hi: 2},
		layertest.Parity{Layer: fmt.Sprintf(lrn, "norm_region: WITHIN_CHANNEL local_size: 3"), Bottom: big, Lo: -2, Hi: 2},
		layertest.Parity{Layer: fmt.Sprintf(lrn, "norm_region: WITHIN_CHANNEL local_size: 5 alpha: 2"), Bottom: big, Lo: -2, Hi: 2},
	)
}

// refLRN is Caffe's ReferenceLRNForward (test_lrn_layer.cpp), with k for
// ACROSS_CHANNELS: the window sums taken directly.
func refLRN(x []float64, shape []int, within bool, size int, alpha, beta, k float64) []float64 {
	num, channels, height, width := shape[0], shape[1], shape[2], shape[3]
	at := func(n, c, h, w int) float64 { return x[((n*channels+c)*height+h)*width+w] }
	y := make([]float64, len(x))
	half := (size - 1) / 2
	i := 0
	for n := range num {
		for c := range channels {
			for h := range height {
				for w := range width {
					scale := k
					if within {
						scale = 1
						for hh := max(h-half, 0); hh < min(h-half+size, height); hh++ {
							for ww := max(w-half, 0); ww < min(w-half+size, width); ww++ {
								v := at(n, c, hh, ww)
								scale += v * v * alpha / float64(size*size)
							}
						}
					} else {
						for cc := max(c-half, 0); cc < min(c-half+size, channels); cc++ {
							v := at(n, cc, h, w)
							scale += v * v * alpha / float64(size)
						}
					}
					y[i] = at(n, c, h, w) / math.Pow(scale, beta)
					i++
				}
			}
		}
	}
	return y
}

// Caffe's TestForward{AcrossChannels,AcrossChannelsLargeRegion,
// WithinChannel}, over more local sizes and parameters, in both
// precisions.
// lrnCase is a parameter string and the values it sets.
type lrnCase struct {
	param          string
	within         bool
	size           int
	alpha, beta, k float64
}

func TestLRNForwardMatchesReference(t *testing.T) {
	cases := []lrnCase{
		{"", false, 5, 1, 0.75, 1},
		{"local_size: 15", false, 15, 1, 0.75, 1},
		{"local_size: 1", false, 1, 1, 0.75, 1},
		{"local_size: 3 alpha: 0.5 beta: 0.6 k: 2", false, 3, 0.5, 0.6, 2},
		{"norm_region: WITHIN_CHANNEL local_size: 3", true, 3, 1, 0.75, 1},
		{"norm_region: WITHIN_CHANNEL local_size: 5 alpha: 2 beta: 0.5", true, 5, 2, 0.5, 1},
		// k does not enter WITHIN_CHANNEL (Caffe's power layer shifts by 1).
		{"norm_region: WITHIN_CHANNEL local_size: 1 k: 3", true, 1, 1, 0.75, 1},
	}
	// A batch of two, and one image (its planes split over the cores)
	// with planes longer than the vector powers' width.
	for _, shape := range [][]int{{2, 7, 3, 3}, {1, 6, 5, 7}} {
		testLRNCases(t, shape, cases)
	}
}

func testLRNCases(t *testing.T, shape []int, cases []lrnCase) {
	for _, c := range cases {
		x64 := layertest.Blob[float64](t, shape...)
		layertest.FillGaussian(x64, 0, 1, 1701)
		// The parameters are float32 in caffe.proto.
		f32 := func(v float64) float64 { return float64(float32(v)) }
		want := refLRN(x64.CPUData(), shape, c.within, c.size, f32(c.alpha), f32(c.beta), f32(c.k))

		l := layertest.New[float64](t, `type: "LRN" lrn_param { `+c.param+` }`)
		y64 := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x64}, []*blob.Blob[float64]{y64})
		layertest.Forward(t, l, []*blob.Blob[float64]{x64}, []*blob.Blob[float64]{y64})
		if !y64.SameShape(x64) {
			t.Fatalf("%s: top %s, want the bottom's shape", c.param, y64.ShapeString())
		}
		layertest.CheckClose(t, c.param+" (float64)", y64.CPUData(), want, 1e-13)

		l32 := layertest.New[float32](t, `type: "LRN" lrn_param { `+c.param+` }`)
		x32, y32 := layertest.Blob[float32](t, shape...), layertest.Blob[float32](t)
		want32 := make([]float32, len(want))
		for i, v := range x64.CPUData() {
			x32.MutableCPUData()[i] = float32(v)
			want32[i] = float32(want[i])
		}
		layertest.SetUp(t, l32, []*blob.Blob[float32]{x32}, []*blob.Blob[float32]{y32})
		layertest.Forward(t, l32, []*blob.Blob[float32]{x32}, []*blob.Blob[float32]{y32})
		layertest.CheckClose(t, c.param+" (float32)", y32.CPUData(), want32, 1e-5) // Caffe's epsilon
	}
}

func TestLRNErrors(t *testing.T) {
	cases := []struct {
		param  string
		bottom []int
		want   string
	}{
		{`local_size: 4`, []int{1, 3, 5, 5}, "LRN only supports odd values for local_size, got 4"},
		{`local_size: 0`, []int{1, 3, 5, 5}, "LRN only supports odd values for local_size, got 0"},
		{`norm_region: WITHIN_CHANNEL local_size: 2`, []int{1, 3, 5, 5}, "odd values"},
		{``, []int{3, 5, 5}, "input must have 4 axes"},
		{`norm_region: WITHIN_CHANNEL`, []int{1, 3, 5, 5, 2}, "input must have 4 axes"},
	}
	for _, c := range cases {
		l, err := layer.New[float32](layertest.Param(t, `name: "norm1" type: "LRN" lrn_param { `+c.param+` }`))
		if err == nil {
			err = layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, c.bottom...)}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "norm1") {
			t.Errorf("%s on %v: err = %v, want one naming norm1 and containing %q", c.param, c.bottom, err, c.want)
		}
	}
}
