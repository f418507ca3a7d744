package neuron_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	const perChannel = `type: "PReLU" bottom: "x" top: "y" prelu_param { filler { type: "gaussian" } }`
	const shared = `type: "PReLU" bottom: "x" top: "y" prelu_param { channel_shared: true }`
	// The slopes couple elements, so every top element is checked against
	// every input (Caffe's CheckGradientExhaustive).
	cases.AddGrad(
		layertest.GradCase{Name: "PReLU", Layer: perChannel, Bottom: [][]int{neuronShape}, Mode: layertest.Exhaustive, Kink: 0, KinkRange: 0.01},
		layertest.GradCase{Name: "PReLU/shared", Layer: shared, Bottom: [][]int{neuronShape}, Mode: layertest.Exhaustive, Kink: 0, KinkRange: 0.01},
		layertest.GradCase{Name: "PReLU/2-axis", Layer: perChannel, Bottom: [][]int{{5, 4}}, Mode: layertest.Exhaustive, Kink: 0, KinkRange: 0.01},
		layertest.GradCase{Name: "PReLU/5-axis", Layer: shared, Bottom: [][]int{{2, 3, 2, 2, 3}}, Mode: layertest.Summed, Kink: 0, KinkRange: 0.01},
	)
	cases.AddParity(
		layertest.Parity{Layer: perChannel, Bottom: [][]int{{2, 3, 40, 50}}},
		layertest.Parity{Layer: shared, Bottom: [][]int{{4, 5, 30, 20}}},
		layertest.Parity{Layer: perChannel, Bottom: [][]int{{3, 64, 7, 7}}},
	)
}

func TestPReLUDefaultSlopes(t *testing.T) {
	for _, shared := range []bool{false, true} {
		text := `type: "PReLU"`
		if shared {
			text += ` prelu_param { channel_shared: true }`
		}
		r := runNeuron[float64](t, text, neuronShape, neuronGaussian(120, 1), nil, false)
		slopes := r.l.LayerBase().Blobs()
		if len(slopes) != 1 {
			t.Fatalf("shared %v: %d blobs, want 1", shared, len(slopes))
		}
		// Caffe's shapes: one slope per channel, or a blob of no axes.
		wantShape := []int{3}
		if shared {
			wantShape = []int{}
		}
		if got := slopes[0].Shape(); !slices.Equal(got, wantShape) || slopes[0].Count() != neuronCount(wantShape) {
			t.Errorf("shared %v: slope shape %v (count %d), want %v", shared, got, slopes[0].Count(), wantShape)
		}
		for i, v := range slopes[0].CPUData() {
			if v != 0.25 {
				t.Errorf("shared %v: slope %d = %v, want 0.25", shared, i, v)
			}
		}
	}
}

func TestPReLUForward(t *testing.T) {
	for _, text := range []string{
		`type: "PReLU" prelu_param { filler { type: "gaussian" } }`,
		`type: "PReLU" prelu_param { channel_shared: true filler { type: "gaussian" } }`,
	} {
		shared := strings.Contains(text, "channel_shared")
		x := neuronGaussian(120, 1)
		r := runNeuron[float64](t, text, neuronShape, x, nil, false)
		slopes := r.l.LayerBase().Blobs()[0].CPUData()
		for i, v := range x {
			c := (i / 20) % 3
			if shared {
				c = 0
			}
			want := max(v, 0) + slopes[c]*min(v, 0)
			if r.y[i] != want {
				t.Fatalf("%s: y[%d] = %v, want %v", text, i, r.y[i], want)
			}
		}
	}
}

// TestPReLUGradientValues checks the slope and bottom gradients against
// their definitions: da_c = sum over channel c of dy * min(x, 0), dx = dy
// for x > 0 and a_c * dy otherwise.
func TestPReLUGradientValues(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	r := runNeuron[float64](t, `type: "PReLU" prelu_param { filler { type: "uniform" min: -1 max: 1 } }`, neuronShape, x, dy, false)
	slopes := r.l.LayerBase().Blobs()[0].CPUData()
	da := make([]float64, 3)
	for i, v := range x {
		c := (i / 20) % 3
		da[c] += dy[i] * min(v, 0)
		want := dy[i]
		if v <= 0 {
			want = slopes[c] * dy[i]
		}
		if r.dx[i] != want {
			t.Fatalf("dx[%d] = %v, want %v", i, r.dx[i], want)
		}
	}
	layertest.CheckClose(t, "slope diff", r.paramDiffs[0], da, 1e-12)
}

// TestPReLUConsistencyReLU is Caffe's check that PReLU with its default
// slopes is the leaky ReLU of slope 0.25.
func TestPReLUConsistencyReLU(t *testing.T) {
	x, dy := neuronGaussian(120, 1), neuronGaussian(120, 2)
	p := runNeuron[float64](t, `type: "PReLU"`, neuronShape, x, dy, false)
	r := runNeuron[float64](t, `type: "ReLU" relu_param { negative_slope: 0.25 }`, neuronShape, x, dy, false)
	layertest.CheckClose(t, "top", p.y, r.y, 0)
	layertest.CheckClose(t, "bottom diff", p.dx, r.dx, 0)
}

func TestPReLUInPlace(t *testing.T) {
	checkNeuronInPlace(t, `type: "PReLU" prelu_param { filler { type: "gaussian" } }`, neuronGaussian(120, 1))
	checkNeuronInPlace(t, `type: "PReLU" prelu_param { channel_shared: true }`, neuronGaussian(120, 1))
}

// TestPReLUSlopeDiffAccumulates checks that the backward pass adds to the
// slopes' diff, as for every learnable blob.
func TestPReLUSlopeDiffAccumulates(t *testing.T) {
	l := layertest.New[float64](t, `type: "PReLU"`)
	x, y := layertest.Blob[float64](t, neuronShape...), layertest.Blob[float64](t)
	copy(x.MutableCPUData(), neuronGaussian(120, 1))
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	copy(y.MutableCPUDiff(), neuronGaussian(120, 2))
	layertest.Backward(t, l, []*blob.Blob[float64]{y}, []bool{false}, []*blob.Blob[float64]{x})
	once := append([]float64(nil), l.LayerBase().Blobs()[0].CPUDiff()...)
	layertest.Backward(t, l, []*blob.Blob[float64]{y}, []bool{false}, []*blob.Blob[float64]{x})
	twice := make([]float64, len(once))
	for i, v := range once {
		if v == 0 {
			t.Fatalf("slope diff %d is 0 after one pass", i)
		}
		twice[i] = 2 * v
	}
	layertest.CheckClose(t, "slope diff after two passes", l.LayerBase().Blobs()[0].CPUDiff(), twice, 1e-12)
}

func TestPReLUErrors(t *testing.T) {
	setUp := func(text string, shape ...int) error {
		l, err := layer.New[float32](layertest.Param(t, `name: "prelu3" type: "PReLU" `+text))
		if err != nil {
			return err
		}
		return layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, shape...)}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
	}
	cases := []struct {
		text  string
		shape []int
		want  string
	}{
		{``, []int{6}, "at least 2 axes"},
		{`blobs { shape { dim: 4 } data: [1, 2, 3, 4] }`, []int{2, 3, 4}, "4 slopes, want 3"},
		{`prelu_param { channel_shared: true } blobs { shape { dim: 3 } data: [1, 2, 3] }`, []int{2, 3, 4}, "3 slopes, want 1"},
	}
	for _, c := range cases {
		err := setUp(c.text, c.shape...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "prelu3") {
			t.Errorf("%q on %v: err = %v, want one naming prelu3 and containing %q", c.text, c.shape, err, c.want)
		}
	}
	// A bottom whose channels change after set-up.
	l := layertest.New[float32](t, `name: "prelu3" type: "PReLU"`)
	x, y := layertest.Blob[float32](t, 2, 3, 4), layertest.Blob[float32](t)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	if err := x.Reshape([]int{2, 5, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := layer.Forward(l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y}); err == nil || !strings.Contains(err.Error(), "bottom has 5 channels") {
		t.Errorf("forward with 5 channels: err = %v", err)
	}
}

// TestPReLUModelSlopes loads slopes from a model: a shared slope as Caffe
// saves it, a blob of no axes.
func TestPReLUModelSlopes(t *testing.T) {
	l := layertest.New[float64](t, `type: "PReLU" prelu_param { channel_shared: true } blobs { shape { } double_data: 0.5 }`)
	x, y := layertest.Blob[float64](t, 2, 3), layertest.Blob[float64](t)
	copy(x.MutableCPUData(), []float64{-2, -1, 0, 1, 2, -4})
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.CheckClose(t, "top", y.CPUData(), []float64{-1, -0.5, 0, 1, 2, -2}, 0)
}
