package utility_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Split/one", Layer: `type: "Split" bottom: "a" top: "b"`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Split/two", Layer: `type: "Split" bottom: "a" top: "b" top: "c"`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Split/three", Layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Split/three/exhaustive", Layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`,
			Bottom: [][]int{{2, 3, 2}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`, Bottom: [][]int{{4, 5, 20, 17}}},
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b" top: "c"`, Bottom: [][]int{{3, 7, 19, 23}}},
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b"`, Bottom: [][]int{{3, 7, 19, 23}}},
	)
}

func TestSplitForwardBackward(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		l := layertest.New[float64](t, `type: "Split"`)
		bottom := layertest.GaussBlob(t, 1, 2, 3, 6, 5)
		top := layertest.Blobs[float64](t, n)
		layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, top)
		for i, tb := range top {
			layertest.CheckShape(t, "split top", tb, 2, 3, 6, 5)
			layertest.CheckClose(t, "split top "+strconv.Itoa(i), tb.CPUData(), bottom.CPUData(), 0)
		}
		want := make([]float64, bottom.Count())
		for i, tb := range top {
			dy := tb.MutableCPUDiff()
			for j := range dy {
				dy[j] = math.Sin(float64(j*(i+1))) + float64(i)
				want[j] += dy[j]
			}
		}
		layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float64]{bottom})
		layertest.CheckClose(t, "split backward", bottom.CPUDiff(), want, 1e-15)
	}
}

func TestSplitTopsShareData(t *testing.T) {
	l := layertest.New[float64](t, `type: "Split"`)
	bottom := layertest.GaussBlob(t, 1, 4, 5)
	top := layertest.Blobs[float64](t, 2)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, top)
	for i, tb := range top {
		if !layertest.SharesMemory(bottom, tb, false) {
			t.Errorf("top %d does not share the bottom's data", i)
		}
		tb.MutableCPUDiff()[0] = 3
		if bottom.CPUDiff()[0] == 3 {
			t.Errorf("top %d shares the bottom's diff; it must have its own", i)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	l := layertest.New[float64](t, `name: "bad" type: "Split"`)
	b := layertest.GaussBlob(t, 1, 2, 3)
	err := layer.SetUp(l, []*blob.Blob[float64]{b}, []*blob.Blob[float64]{layertest.Blob[float64](t), b})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "in-place") {
		t.Errorf("in-place split: err = %v", err)
	}
	layertest.ExpectSetUpError(t, `type: "Split"`, [][]int{{2, 3}}, 0, "takes at least 1 top")
}
