package vision_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

// uniformFill fills every bottom from U(lo, hi), as Caffe's stochastic
// pooling tests do (U(0.1, 1)).
func uniformFill(lo, hi float64) func(i int, b *blob.Blob[float64]) {
	return func(i int, b *blob.Blob[float64]) { layertest.FillUniform(b, lo, hi, uint64(1701+i)) }
}

func init() {
	const pool = `type: "Pooling" bottom: "x" top: "y" %s pooling_param { %s }`
	bottom := [][]int{{2, 3, 6, 5}} // Caffe's test_pooling_layer bottom
	for _, kh := range []int{3, 4} {
		for _, kw := range []int{3, 4} {
			k := fmt.Sprintf("kernel_h: %d kernel_w: %d stride: 2", kh, kw)
			cases.AddGrad(
				// Caffe: GradientChecker(1e-4, 1e-2) for MAX, (1e-2, 1e-2) for AVE.
				layertest.GradCase{Name: "Pooling/MAX/" + k, Layer: fmt.Sprintf(pool, "", "pool: MAX pad: 1 "+k), Bottom: bottom,
					Step: 1e-4, Threshold: 1e-2},
				layertest.GradCase{Name: "Pooling/MAX/mask/" + k, Layer: fmt.Sprintf(pool, `top: "mask"`, "pool: MAX "+k), Bottom: bottom,
					Step: 1e-4, Threshold: 1e-2},
				layertest.GradCase{Name: "Pooling/AVE/" + k, Layer: fmt.Sprintf(pool, "", "pool: AVE "+k), Bottom: bottom,
					Threshold: 1e-2},
				layertest.GradCase{Name: "Pooling/AVE/padded/" + k, Layer: fmt.Sprintf(pool, "", "pool: AVE pad: 2 "+k), Bottom: bottom,
					Threshold: 1e-2},
			)
		}
	}
	cases.AddGrad(
		layertest.GradCase{Name: "Pooling/MAX/floor", Layer: fmt.Sprintf(pool, "", "kernel_size: 2 stride: 2 round_mode: FLOOR"), Bottom: bottom,
			Step: 1e-4, Threshold: 1e-2},
		layertest.GradCase{Name: "Pooling/AVE/global", Layer: fmt.Sprintf(pool, "", "pool: AVE global_pooling: true"), Bottom: bottom,
			Threshold: 1e-2},
		// Caffe checks the summed objective only (its stochastic test does
		// not run exhaustively); the checker reseeds the RNG before each
		// forward pass, so every pass draws the same numbers. A step can
		// still move a window's running sum across its threshold and change
		// the sample; Caffe's step 1e-4 makes that likely enough (about one
		// run in ten) with the GPU's other draws, 1e-6 makes it rare, and
		// the output is piecewise quadratic, so the small step costs no
		// accuracy.
		layertest.GradCase{Name: "Pooling/STOCHASTIC/TRAIN", Layer: fmt.Sprintf(pool, "phase: TRAIN", "pool: STOCHASTIC kernel_size: 3 stride: 2"),
			Bottom: bottom, Fill: uniformFill(0.1, 1), Mode: layertest.Summed, Step: 1e-6, Threshold: 1e-2},
		layertest.GradCase{Name: "Pooling/STOCHASTIC/TEST", Layer: fmt.Sprintf(pool, "phase: TEST", "pool: STOCHASTIC kernel_size: 3 stride: 2"),
			Bottom: bottom, Fill: uniformFill(0.1, 1)},
	)
	big := [][]int{{4, 8, 13, 11}}
	cases.AddParity(
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 3 stride: 2 pad: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, `top: "mask"`, "pool: MAX kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: AVE kernel_size: 3 stride: 2 pad: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: AVE kernel_h: 4 kernel_w: 3 stride_h: 3 stride_w: 2 pad_h: 2 pad_w: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: AVE global_pooling: true"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX global_pooling: true"), Bottom: big},
		// The GPU's backward gathers from at most 2x2 (above), 3x3 and
		// more covering outputs.
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 3 stride: 1 pad: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, `top: "mask"`, "pool: MAX kernel_h: 3 kernel_w: 4 stride: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "phase: TEST", "pool: STOCHASTIC kernel_size: 3 stride: 2"), Bottom: big, Lo: 0, Hi: 1},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 3 stride: 2 round_mode: FLOOR"), Bottom: [][]int{{4, 8, 12, 11}}},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: AVE kernel_size: 2 stride: 2 pad: 1 round_mode: FLOOR"), Bottom: [][]int{{4, 8, 12, 11}}},
		// MAX's gradient by tiles (offset_pool_tiles): a kernel of more
		// than twice the stride, unequal strides and pads, windows with
		// gaps between them, and rows past the last window (FLOOR).
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 5 stride: 2 pad: 2"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_h: 4 kernel_w: 2 stride_h: 3 stride_w: 1 pad_h: 2 pad_w: 1"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 2 stride: 3"), Bottom: big},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 2 stride: 3 round_mode: FLOOR"), Bottom: [][]int{{4, 8, 12, 10}}},
		// Stride larger than the kernel without padding: the last window
		// lies beyond the image.
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: MAX kernel_size: 1 stride: 2"), Bottom: [][]int{{4, 8, 12, 10}}},
		layertest.Parity{Layer: fmt.Sprintf(pool, "", "pool: AVE kernel_size: 1 stride: 2"), Bottom: [][]int{{4, 8, 12, 10}}},
	)
}

// poolRun sets a pooling layer up on a bottom of the given shape and
// values (repeated to fill it) and runs forward; it returns the layer and
// its tops.
func poolRun(t *testing.T, param string, nTop int, shape []int, values []float64) (layer.Layer[float64], *blob.Blob[float64], []*blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, `type: "Pooling" `+param)
	x := layertest.Blob[float64](t, shape...)
	for i := range x.Count() {
		x.MutableCPUData()[i] = values[i%len(values)]
	}
	top := layertest.Blobs[float64](t, nTop)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, top)
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, top)
	return l, x, top
}

// checkPlanes checks that every plane of b holds want.
func checkPlanes(t *testing.T, what string, b *blob.Blob[float64], shape []int, want []float64) {
	t.Helper()
	if !b.SameShape(mustBlob(t, shape...)) {
		t.Fatalf("%s shape %s, want %v", what, b.ShapeString(), shape)
	}
	for i, v := range b.CPUData() {
		if v != want[i%len(want)] {
			t.Fatalf("%s[%d] = %v, want %v (plane %v)", what, i, v, want[i%len(want)], want)
		}
	}
}

// magic6 is MATLAB's magic(6), the plane of Caffe's rectangular tests.
var magic6 = []float64{
	35, 1, 6, 26, 19, 24,
	3, 32, 7, 21, 23, 25,
	31, 9, 2, 22, 27, 20,
	8, 28, 33, 17, 10, 15,
	30, 5, 34, 12, 14, 16,
	4, 36, 29, 13, 18, 11,
}

// Caffe's TestForwardMax and TestForwardMaxTopMask: square, tall and wide
// kernels on 2 x 2 planes, with and without the mask top.
func TestPoolingForwardMax(t *testing.T) {
	cases := []struct {
		name, param     string
		plane           []float64
		in, out         []int
		wantTop, wantIx []float64
	}{
		{"square", "kernel_size: 2", []float64{1, 2, 5, 2, 3, 9, 4, 1, 4, 8, 1, 2, 5, 2, 3}, []int{2, 2, 3, 5}, []int{2, 2, 2, 4},
			[]float64{9, 5, 5, 8, 9, 5, 5, 8}, []float64{5, 2, 2, 9, 5, 12, 12, 9}},
		{"high", "kernel_h: 3 kernel_w: 2", magic6, []int{2, 2, 6, 6}, []int{2, 2, 4, 5},
			[]float64{35, 32, 26, 27, 27, 32, 33, 33, 27, 27, 31, 34, 34, 27, 27, 36, 36, 34, 18, 18},
			[]float64{0, 7, 3, 16, 16, 7, 20, 20, 16, 16, 12, 26, 26, 16, 16, 31, 31, 26, 34, 34}},
		{"wide", "kernel_h: 2 kernel_w: 3", magic6, []int{2, 2, 6, 6}, []int{2, 2, 5, 4},
			[]float64{35, 32, 26, 26, 32, 32, 27, 27, 33, 33, 33, 27, 34, 34, 34, 17, 36, 36, 34, 18},
			[]float64{0, 7, 3, 3, 7, 7, 16, 16, 20, 20, 20, 16, 26, 26, 26, 21, 31, 31, 26, 34}},
	}
	for _, c := range cases {
		param := `pooling_param { pool: MAX ` + c.param + ` }`
		_, _, top := poolRun(t, param, 1, c.in, c.plane)
		checkPlanes(t, c.name+" top", top[0], c.out, c.wantTop)
		_, _, top = poolRun(t, `top: "y" top: "mask" `+param, 2, c.in, c.plane)
		checkPlanes(t, c.name+" top with mask", top[0], c.out, c.wantTop)
		checkPlanes(t, c.name+" mask", top[1], c.out, c.wantIx)
	}
}

// Caffe's TestForwardMaxPadded: kernel 3, stride 2, pad 2 on a 3 x 3 plane.
func TestPoolingForwardMaxPadded(t *testing.T) {
	_, _, top := poolRun(t, `pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 2 }`, 1, []int{1, 1, 3, 3},
		[]float64{1, 2, 4, 2, 3, 2, 4, 2, 1})
	checkPlanes(t, "top", top[0], []int{1, 1, 3, 3}, []float64{1, 4, 4, 4, 4, 4, 4, 4, 1})
}

// Caffe's TestForwardAve: kernel 3, stride 1, pad 1 on a constant 3 x 3
// plane of 2: the padding counts in the divisor.
func TestPoolingForwardAve(t *testing.T) {
	_, _, top := poolRun(t, `pooling_param { pool: AVE kernel_size: 3 stride: 1 pad: 1 }`, 1, []int{1, 1, 3, 3}, []float64{2})
	want := []float64{8.0 / 9, 4.0 / 3, 8.0 / 9, 4.0 / 3, 2, 4.0 / 3, 8.0 / 9, 4.0 / 3, 8.0 / 9}
	layertest.CheckClose(t, "top", top[0].CPUData(), want, 1e-15)
}

// Caffe's TestSetup, TestSetupPadded and TestSetupGlobalPooling, and the
// rounding modes.
func TestPoolingOutputShape(t *testing.T) {
	cases := []struct {
		param string
		in    []int
		want  string
	}{
		{"kernel_size: 3 stride: 2", []int{2, 3, 6, 5}, "2 3 3 2 (36)"},
		{"pool: AVE kernel_size: 3 stride: 2 pad: 1", []int{2, 3, 6, 5}, "2 3 4 3 (72)"},
		{"pool: AVE global_pooling: true", []int{2, 3, 6, 5}, "2 3 1 1 (6)"},
		{"kernel_size: 3 stride: 2", []int{1, 1, 8, 7}, "1 1 4 3 (12)"},
		{"kernel_size: 3 stride: 2 round_mode: FLOOR", []int{1, 1, 8, 7}, "1 1 3 3 (9)"},
		{"kernel_h: 2 kernel_w: 3 stride_h: 3 stride_w: 2 pad_h: 1 pad_w: 2", []int{1, 1, 8, 7}, "1 1 3 5 (15)"},
		// The last window would start in the right padding: dropped.
		{"kernel_size: 2 stride: 2 pad: 1", []int{1, 1, 4, 4}, "1 1 3 3 (9)"},
		// A pad on either axis drops a last window that would start past
		// the image on both: Caffe tests pad_h || pad_w (rows: 1 + ceil(4/3)
		// = 3, the third starting at 6 of 5).
		{"kernel_h: 1 kernel_w: 4 stride_h: 3 stride_w: 2 pad_h: 0 pad_w: 1", []int{1, 1, 5, 9}, "1 1 2 5 (10)"},
		// A kernel larger than the input still gives an output with CEIL.
		{"kernel_size: 3 stride: 2", []int{1, 1, 2, 2}, "1 1 1 1 (1)"},
	}
	for _, c := range cases {
		_, _, top := poolRun(t, `pooling_param { `+c.param+` }`, 1, c.in, []float64{1})
		if got := top[0].ShapeString(); got != c.want {
			t.Errorf("%s on %v: top %s, want %s", c.param, c.in, got, c.want)
		}
	}
}

// refPool is the direct definition of pooling one output (MAX, AVE or
// STOCHASTIC in TEST), for checking the layer on random inputs.
func refPool(method string, x []float64, h, w, kh, kw, sh, sw, phd, pwd, oh, ow, ph, pw int) float64 {
	hs, ws := ph*sh-phd, pw*sw-pwd
	he, we := min(hs+kh, h+phd), min(ws+kw, w+pwd)
	size := float64((he - hs) * (we - ws))
	hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
	best, sum, sq := math.Inf(-1), 0.0, 0.0
	for i := hs; i < he; i++ {
		for j := ws; j < we; j++ {
			v := x[i*w+j]
			best, sum, sq = math.Max(best, v), sum+v, sq+v*v
		}
	}
	switch method {
	case "MAX":
		return best
	case "AVE":
		return sum / size
	}
	return sq / (sum + 1.17549435082228750797e-38)
}

func TestPoolingForwardMatchesDefinition(t *testing.T) {
	cases := []struct {
		method                         string
		kh, kw, sh, sw, ph, pw, oh, ow int
		round                          string
	}{
		{"MAX", 3, 3, 2, 2, 1, 1, 7, 6, "CEIL"},
		{"MAX", 4, 2, 3, 1, 2, 1, 5, 12, "CEIL"},
		{"MAX", 3, 3, 2, 2, 0, 0, 6, 5, "FLOOR"},
		{"AVE", 3, 3, 2, 2, 1, 1, 7, 6, "CEIL"},
		{"AVE", 4, 2, 3, 1, 2, 1, 5, 12, "CEIL"},
		{"AVE", 3, 3, 2, 2, 2, 2, 8, 7, "FLOOR"},
		{"STOCHASTIC", 3, 2, 2, 3, 0, 0, 6, 4, "CEIL"},
	}
	const h, w = 13, 11
	for _, c := range cases {
		param := fmt.Sprintf(`phase: TEST pooling_param { pool: %s kernel_h: %d kernel_w: %d stride_h: %d stride_w: %d pad_h: %d pad_w: %d round_mode: %s }`,
			c.method, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.round)
		l := layertest.New[float64](t, `type: "Pooling" `+param)
		x := layertest.Blob[float64](t, 2, 3, h, w)
		layertest.FillUniform(x, 0, 1, 5)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		if !y.SameShape(mustBlob(t, 2, 3, c.oh, c.ow)) {
			t.Fatalf("%s: top %s, want 2 3 %d %d", param, y.ShapeString(), c.oh, c.ow)
		}
		var want []float64
		for p := range 6 {
			plane := x.CPUData()[p*h*w : (p+1)*h*w]
			for i := range c.oh {
				for j := range c.ow {
					want = append(want, refPool(c.method, plane, h, w, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.oh, c.ow, i, j))
				}
			}
		}
		layertest.CheckClose(t, param, y.CPUData(), want, 1e-14)
	}
}

// MAX backward puts each output's gradient on its argmax; AVE spreads it
// over the window divided by the padded window size.
func TestPoolingBackwardRoutes(t *testing.T) {
	l, x, top := poolRun(t, `pooling_param { pool: MAX kernel_size: 2 }`, 1, []int{1, 1, 3, 5},
		[]float64{1, 2, 5, 2, 3, 9, 4, 1, 4, 8, 1, 2, 5, 2, 3})
	copy(top[0].MutableCPUDiff(), []float64{1, 2, 3, 4, 5, 6, 7, 8})
	layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float64]{x})
	// Argmaxes (Caffe's mask): 5 2 2 9 / 5 12 12 9.
	want := []float64{0, 0, 2 + 3, 0, 0, 1 + 5, 0, 0, 0, 4 + 8, 0, 0, 6 + 7, 0, 0}
	layertest.CheckClose(t, "MAX bottom diff", x.CPUDiff(), want, 0)

	l, x, top = poolRun(t, `pooling_param { pool: AVE kernel_size: 2 stride: 2 pad: 1 }`, 1, []int{1, 1, 2, 3}, []float64{1})
	// 2 x 2 outputs (the third column of windows would start in the right
	// padding); windows cover rows {-1, 0} and {1, 2}, columns {-1, 0} and
	// {1, 2}: all of size 4 counting the padding, though they hold 1 or 2
	// image elements.
	copy(top[0].MutableCPUDiff(), []float64{4, 8, 12, 16})
	layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float64]{x})
	layertest.CheckClose(t, "AVE bottom diff", x.CPUDiff(), []float64{1, 2, 2, 3, 4, 4}, 0)
}

// A stride larger than the kernel without padding leaves the last window
// beyond the image (Caffe keeps the output): MAX gives -FLT_MAX there with
// index -1 and no gradient, AVE gives 0.
func TestPoolingEmptyWindow(t *testing.T) {
	values := []float64{3, 1, 4, 1}
	l, x, top := poolRun(t, `top: "y" top: "mask" pooling_param { pool: MAX kernel_size: 1 stride: 2 }`, 2, []int{1, 1, 1, 4}, values)
	checkPlanes(t, "MAX top", top[0], []int{1, 1, 1, 3}, []float64{3, 4, -math.MaxFloat32})
	checkPlanes(t, "MAX mask", top[1], []int{1, 1, 1, 3}, []float64{0, 2, -1})
	copy(top[0].MutableCPUDiff(), []float64{1, 2, 3})
	layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float64]{x})
	layertest.CheckClose(t, "MAX bottom diff", x.CPUDiff(), []float64{1, 0, 2, 0}, 0)

	_, _, top = poolRun(t, `pooling_param { pool: AVE kernel_size: 1 stride: 2 }`, 1, []int{1, 1, 1, 4}, values)
	checkPlanes(t, "AVE top", top[0], []int{1, 1, 1, 3}, []float64{3, 4, 0})
}

// Caffe's TestStochastic: in TRAIN every output is one of its window's
// elements, and the outputs average more than the inputs (0.55) since
// larger values are likelier. Backward puts dy exactly on the sampled
// element.
func TestPoolingStochasticTrain(t *testing.T) {
	l := layertest.New[float64](t, `type: "Pooling" phase: TRAIN pooling_param { pool: STOCHASTIC kernel_size: 3 stride: 2 }`)
	l.LayerBase().SetRNG(mathfn.NewRNG(7))
	x := layertest.Blob[float64](t, 2, 3, 6, 5)
	layertest.FillUniform(x, 0.1, 1, 1701)
	y := layertest.Blob[float64](t)
	bottom, top := []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y}
	layertest.SetUp(t, l, bottom, top)
	for pass := range 3 {
		layertest.Forward(t, l, bottom, top)
		if got := y.ShapeString(); got != "2 3 3 2 (36)" {
			t.Fatalf("top %s", got)
		}
		for i := range y.Count() {
			y.MutableCPUDiff()[i] = float64(i + 1)
		}
		layertest.Backward(t, l, top, []bool{true}, bottom)
		total := 0.0
		seen := make([]float64, x.Count()) // the gradient each bottom element should get
		for p := range 6 {
			for ph := range 3 {
				for pw := range 2 {
					o := p*6 + ph*2 + pw
					pooled := y.CPUData()[o]
					total += pooled
					found := -1
					for h := ph * 2; h < min(ph*2+3, 6); h++ {
						for w := pw * 2; w < min(pw*2+3, 5); w++ {
							if i := p*30 + h*5 + w; x.CPUData()[i] == pooled {
								found = i
							}
						}
					}
					if found < 0 {
						t.Fatalf("pass %d: output %d = %v is not in its window", pass, o, pooled)
					}
					seen[found] += float64(o + 1)
				}
			}
		}
		if mean := total / float64(y.Count()); mean < 0.55 {
			t.Errorf("pass %d: mean output %v, want >= 0.55", pass, mean)
		}
		layertest.CheckClose(t, "bottom diff", x.CPUDiff(), seen, 0)
	}
}

// The sampling frequencies follow the values: a window {1, 3} yields 3
// three times in four.
func TestPoolingStochasticFrequencies(t *testing.T) {
	const n = 20000
	l := layertest.New[float64](t, `type: "Pooling" phase: TRAIN pooling_param { pool: STOCHASTIC kernel_h: 1 kernel_w: 2 }`)
	l.LayerBase().SetRNG(mathfn.NewRNG(42))
	x := layertest.Blob[float64](t, 1, n, 1, 2)
	for i := range n {
		x.MutableCPUData()[2*i], x.MutableCPUData()[2*i+1] = 1, 3
	}
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	threes := 0
	for _, v := range y.CPUData() {
		if v == 3 {
			threes++
		}
	}
	// The standard deviation of the fraction is sqrt(3/16/n) ~ 0.003.
	if f := float64(threes) / n; math.Abs(f-0.75) > 0.015 {
		t.Errorf("3 drawn %v of the time, want 0.75", f)
	}
}

// Caffe's TestStochasticTestPhase: in TEST each output is sum(x^2)/sum(x),
// never above the window's maximum; an all-zero window gives 0.
func TestPoolingStochasticTest(t *testing.T) {
	_, _, top := poolRun(t, `phase: TEST pooling_param { pool: STOCHASTIC kernel_size: 2 stride: 2 }`, 1, []int{1, 1, 2, 4},
		[]float64{1, 2, 0, 0, 3, 4, 0, 0})
	layertest.CheckClose(t, "top", top[0].CPUData(), []float64{(1 + 4 + 9 + 16) / 10.0, 0}, 1e-15)
}

func TestPoolingErrors(t *testing.T) {
	cases := []struct {
		param  string
		bottom []int
		tops   int
		want   string
	}{
		{`pool: MAX`, []int{1, 1, 5, 5}, 1, "kernel_size (or kernel_h and kernel_w) must be specified"},
		{`kernel_size: 3 kernel_h: 3`, []int{1, 1, 5, 5}, 1, "kernel is kernel_size OR kernel_h and kernel_w; not both"},
		{`kernel_h: 3`, []int{1, 1, 5, 5}, 1, "both kernel_h and kernel_w are required"},
		{`kernel_size: 3 pad: 1 pad_h: 1 pad_w: 1`, []int{1, 1, 5, 5}, 1, "pad is pad OR pad_h and pad_w; not both"},
		{`kernel_size: 3 stride_w: 2`, []int{1, 1, 5, 5}, 1, "both stride_h and stride_w are required"},
		{`global_pooling: true kernel_size: 3`, []int{1, 1, 5, 5}, 1, "the filter size cannot be specified"},
		{`global_pooling: true pad: 1`, []int{1, 1, 5, 5}, 1, "only pad = 0 and stride = 1"},
		{`global_pooling: true stride: 2`, []int{1, 1, 5, 5}, 1, "only pad = 0 and stride = 1"},
		{`kernel_size: 3 pad: 3`, []int{1, 1, 5, 5}, 1, "pad 3 x 3 must be smaller than the kernel 3 x 3"},
		{`pool: STOCHASTIC kernel_size: 3 pad: 1`, []int{1, 1, 5, 5}, 1, "padding is implemented only for average and max pooling"},
		{`kernel_size: 3 stride: 0`, []int{1, 1, 5, 5}, 1, "stride must be positive"},
		{`kernel_size: 0`, []int{1, 1, 5, 5}, 1, "filter dimensions cannot be zero"},
		{`kernel_size: 3`, []int{1, 5, 5}, 1, "input must have 4 axes"},
		{`kernel_size: 4 round_mode: FLOOR`, []int{1, 1, 3, 5}, 1, "leaves no output for input height 3"},
		{`kernel_size: 2 stride: 2`, []int{1, 1, 4097, 4097}, 1, "more elements than float32 indices can address"},
		{`pool: AVE kernel_size: 3`, []int{1, 1, 5, 5}, 2, "takes 1 top blob(s), got 2"},
		{`pool: MAX kernel_size: 3`, []int{1, 1, 5, 5}, 3, "takes at most 2 top blob(s), got 3"},
	}
	for _, c := range cases {
		l, err := layer.New[float32](layertest.Param(t, `name: "pool3" type: "Pooling" pooling_param { `+c.param+` }`))
		if err == nil {
			err = layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, c.bottom...)}, layertest.Blobs[float32](t, c.tops))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pool3") {
			t.Errorf("%s on %v: err = %v, want one naming pool3 and containing %q", c.param, c.bottom, err, c.want)
		}
	}
}
