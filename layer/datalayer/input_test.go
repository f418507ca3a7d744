package datalayer_test

import (
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddParity(layertest.Parity{Layer: `type: "Input" top: "a" top: "b" input_param { shape { dim: 4 dim: 5 dim: 20 dim: 17 } shape { dim: 3 dim: 1000 } }`})
}

func TestInputShapes(t *testing.T) {
	cases := []struct {
		param string
		nTop  int
		want  [][]int
	}{
		{`input_param { shape { dim: 2 dim: 3 dim: 4 } }`, 1, [][]int{{2, 3, 4}}},
		{`input_param { shape { dim: 2 dim: 3 } }`, 3, [][]int{{2, 3}, {2, 3}, {2, 3}}},
		{`input_param { shape { dim: 2 dim: 3 } shape { dim: 5 } }`, 2, [][]int{{2, 3}, {5}}},
		{``, 2, [][]int{{7}, {7}}}, // no shape: the tops keep theirs
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Input" `+c.param)
		top := layertest.Blobs[float64](t, c.nTop)
		if c.param == "" {
			for _, tb := range top {
				if err := tb.Reshape([]int{7}); err != nil {
					t.Fatal(err)
				}
			}
		}
		layertest.SetUpForward(t, l, nil, top)
		for i, tb := range top {
			layertest.CheckShape(t, c.param+" top "+strconv.Itoa(i), tb, c.want[i]...)
		}
	}
}

// TestInputForwardKeepsData checks that forward leaves what the caller
// wrote in the tops.
func TestInputForwardKeepsData(t *testing.T) {
	l := layertest.New[float64](t, `type: "Input" input_param { shape { dim: 2 dim: 3 } }`)
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, nil, []*blob.Blob[float64]{top})
	copy(top.MutableCPUData(), []float64{1, 2, 3, 4, 5, 6})
	layertest.Forward(t, l, nil, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "input top", top.CPUData(), []float64{1, 2, 3, 4, 5, 6}, 0)
}

func TestInputErrors(t *testing.T) {
	layertest.ExpectSetUpError(t, `type: "Input" input_param { shape { dim: 2 } shape { dim: 3 } }`, nil, 3, "once, once per top blob, or not at all", "3 tops vs. 2 shapes")
	layertest.ExpectSetUpError(t, `type: "Input" input_param { shape { dim: 2 } }`, [][]int{{2}}, 1, "takes 0 bottom")
	layertest.ExpectSetUpError(t, `type: "Input" input_param { shape { dim: -2 } }`, nil, 1, "shape")
}
