package neuron_test

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	// No gradient case: Threshold has no backward pass (see
	// TestEveryLayerHasCases). Parity checks the forward pass only.
	cases.AddParity(
		layertest.Parity{Layer: `type: "Threshold" bottom: "x" top: "y" threshold_param { threshold: 0.2 }`,
			Bottom: [][]int{{2, 3, 40, 50}}, NoPropagate: []int{0}},
		layertest.Parity{Layer: `type: "Threshold" bottom: "x" top: "y"`, Bottom: [][]int{{3000}}, NoPropagate: []int{0}},
	)
}

func TestThresholdForward(t *testing.T) {
	for _, th := range []float64{0, 0.5, -0.25} {
		x := neuronGaussian(120, 1)
		x[3] = th // not above the threshold
		for _, inPlace := range []bool{false, true} {
			r := runNeuron[float64](t, `type: "Threshold" threshold_param { threshold: `+layertest.Ftoa(th)+` }`, neuronShape, x, nil, inPlace)
			for i, v := range x {
				want := 0.0
				if v > th {
					want = 1
				}
				if r.y[i] != want {
					t.Fatalf("threshold %v (in place %v): y[%d] = %v for x = %v", th, inPlace, i, r.y[i], v)
				}
			}
		}
	}
}

func TestThresholdHasNoBackward(t *testing.T) {
	l := layertest.New[float32](t, `name: "th" type: "Threshold"`)
	x, y := layertest.Blob[float32](t, 4), layertest.Blob[float32](t)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	err := layer.Backward(l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
	if err == nil || !strings.Contains(err.Error(), "no backward") || !strings.Contains(err.Error(), `"th"`) {
		t.Errorf("err = %v, want a no-backward error naming th", err)
	}
	// Without propagation there is nothing to do.
	layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{false}, []*blob.Blob[float32]{x})
}
