package utility_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddParity(layertest.Parity{Layer: `type: "Silence" bottom: "a" bottom: "b"`, Bottom: [][]int{{4, 5, 20, 17}, {3, 1000}}})
}

func TestSilence(t *testing.T) {
	l := layertest.New[float64](t, `type: "Silence"`)
	bottom := layertest.GaussBlobs(t, []int{2, 3}, []int{4}, []int{5, 1, 2})
	layertest.SetUpForward(t, l, bottom, nil)
	for _, b := range bottom {
		for j := range b.Count() {
			b.MutableCPUDiff()[j] = 9
		}
	}
	layertest.Backward(t, l, nil, []bool{true, false, true}, bottom)
	for i, b := range bottom {
		want := 0.0
		if i == 1 {
			want = 9 // no propagate_down: untouched
		}
		for _, v := range b.CPUDiff() {
			if v != want {
				t.Fatalf("bottom %d diff = %v, want %v", i, v, want)
			}
		}
	}
}

func TestSilenceErrors(t *testing.T) {
	layertest.ExpectSetUpError(t, `type: "Silence"`, [][]int{{2}}, 1, "takes 0 top")
	layertest.ExpectSetUpError(t, `type: "Silence"`, nil, 0, "takes at least 1 bottom")
}
