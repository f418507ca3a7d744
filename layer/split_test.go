package layer_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	addGradCases(
		gradCase{name: "Split/one", layer: `type: "Split" bottom: "a" top: "b"`,
			bottom: [][]int{{2, 3, 6, 5}}, mode: eltwise, threshold: 1e-2},
		gradCase{name: "Split/two", layer: `type: "Split" bottom: "a" top: "b" top: "c"`,
			bottom: [][]int{{2, 3, 6, 5}}, mode: eltwise, threshold: 1e-2},
		gradCase{name: "Split/three", layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`,
			bottom: [][]int{{2, 3, 6, 5}}, mode: eltwise, threshold: 1e-2},
		gradCase{name: "Split/three/exhaustive", layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`,
			bottom: [][]int{{2, 3, 2}}},
	)
	addParityCases(
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`, Bottom: [][]int{{4, 5, 20, 17}}},
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b" top: "c"`, Bottom: [][]int{{3, 7, 19, 23}}},
		layertest.Parity{Layer: `type: "Split" bottom: "a" top: "b"`, Bottom: [][]int{{3, 7, 19, 23}}},
	)
}

func TestSplitForwardBackward(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		l := layertest.New[float64](t, `type: "Split"`)
		bottom := stGaussBlob(t, 1, 2, 3, 6, 5)
		top := layertest.Blobs[float64](t, n)
		stRun(t, l, []*blobF64{bottom}, top)
		for i, tb := range top {
			stCheckShape(t, "split top", tb, 2, 3, 6, 5)
			layertest.CheckClose(t, "split top "+itoa(i), tb.CPUData(), bottom.CPUData(), 0)
		}
		want := make([]float64, bottom.Count())
		for i, tb := range top {
			dy := tb.MutableCPUDiff()
			for j := range dy {
				dy[j] = math.Sin(float64(j*(i+1))) + float64(i)
				want[j] += dy[j]
			}
		}
		layertest.Backward(t, l, top, []bool{true}, []*blobF64{bottom})
		layertest.CheckClose(t, "split backward", bottom.CPUDiff(), want, 1e-15)
	}
}

func TestSplitTopsShareData(t *testing.T) {
	l := layertest.New[float64](t, `type: "Split"`)
	bottom := stGaussBlob(t, 1, 4, 5)
	top := layertest.Blobs[float64](t, 2)
	stRun(t, l, []*blobF64{bottom}, top)
	for i, tb := range top {
		if !stSharesMemory(bottom, tb, false) {
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
	b := stGaussBlob(t, 1, 2, 3)
	err := layer.SetUp(l, []*blobF64{b}, []*blobF64{layertest.Blob[float64](t), b})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "in-place") {
		t.Errorf("in-place split: err = %v", err)
	}
	stExpectError(t, `type: "Split"`, [][]int{{2, 3}}, 0, "takes at least 1 top")
}
