package layer_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	// Caffe's test_slice_layer: exhaustive checks, step 1e-2, threshold 1e-3.
	addGradCases(
		gradCase{name: "Slice/trivial", layer: `type: "Slice" bottom: "a" top: "b"`,
			bottom: [][]int{{2, 3, 2, 3}}},
		gradCase{name: "Slice/num", layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { slice_dim: 0 }`,
			bottom: [][]int{{6, 2, 2, 3}}},
		gradCase{name: "Slice/channels/points", layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { slice_point: 1 slice_point: 4 }`,
			bottom: [][]int{{2, 6, 2, 3}}},
		gradCase{name: "Slice/num/points", layer: `type: "Slice" bottom: "a" top: "b" top: "c" slice_param { axis: 0 slice_point: 1 }`,
			bottom: [][]int{{3, 4, 2, 3}}},
		gradCase{name: "Slice/channels/equal", layer: `type: "Slice" bottom: "a" top: "b" top: "c"`,
			bottom: [][]int{{2, 6, 3, 2}}},
	)
	addParityCases(
		layertest.Parity{Layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { slice_point: 3 slice_point: 8 }`,
			Bottom: [][]int{{4, 12, 20, 17}}},
		layertest.Parity{Layer: `type: "Slice" bottom: "a" top: "b" top: "c" slice_param { axis: 0 }`,
			Bottom: [][]int{{6, 5, 21, 17}}},
		layertest.Parity{Layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { axis: -1 }`,
			Bottom: [][]int{{8, 40, 27}}},
		layertest.Parity{Layer: `type: "Slice" bottom: "a" top: "b"`, Bottom: [][]int{{3, 5, 21, 17}}},
	)
}

func TestSliceSetUp(t *testing.T) {
	cases := []struct {
		param string
		nTop  int
		want  [][]int
	}{
		{`slice_param { slice_dim: 0 }`, 3, [][]int{{2, 12, 2, 3}, {2, 12, 2, 3}, {2, 12, 2, 3}}},
		{`slice_param { axis: 0 }`, 2, [][]int{{3, 12, 2, 3}, {3, 12, 2, 3}}},
		{``, 2, [][]int{{6, 6, 2, 3}, {6, 6, 2, 3}}},
		{`slice_param { slice_point: 3 }`, 2, [][]int{{6, 3, 2, 3}, {6, 9, 2, 3}}},
		{`slice_param { axis: -1 slice_point: 1 slice_point: 2 }`, 3, [][]int{{6, 12, 2, 1}, {6, 12, 2, 1}, {6, 12, 2, 1}}},
		{`slice_param { slice_point: 2 slice_point: 8 }`, 3, [][]int{{6, 2, 2, 3}, {6, 6, 2, 3}, {6, 4, 2, 3}}},
		{``, 1, [][]int{{6, 12, 2, 3}}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Slice" `+c.param)
		top := layertest.Blobs[float64](t, c.nTop)
		layertest.SetUp(t, l, []*blobF64{stGaussBlob(t, 1, 6, 12, 2, 3)}, top)
		for i, tb := range top {
			stCheckShape(t, c.param+" top "+itoa(i), tb, c.want[i]...)
		}
	}
}

func TestSliceForwardBackward(t *testing.T) {
	cases := []struct {
		param string
		nTop  int
		axis  int
	}{
		{`slice_param { slice_dim: 0 }`, 3, 0},
		{`slice_param { slice_point: 2 slice_point: 8 }`, 3, 1},
		{`slice_param { axis: 3 slice_point: 1 }`, 2, 3},
		{`slice_param { axis: 2 }`, 2, 2},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Slice" `+c.param)
		bottom := stGaussBlob(t, 3, 6, 12, 2, 3)
		top := layertest.Blobs[float64](t, c.nTop)
		stRun(t, l, []*blobF64{bottom}, top)
		var parts [][]float64
		var widths []int
		for _, tb := range top {
			parts = append(parts, tb.CPUData())
			widths = append(widths, tb.Shape()[c.axis])
		}
		// Joining the tops again must give back the bottom.
		outer, inner := bottom.CountRange(0, c.axis), bottom.CountFrom(c.axis+1)
		layertest.CheckClose(t, "slice "+c.param, stAxisJoin(parts, widths, outer, inner), bottom.CPUData(), 0)

		// Backward concatenates the diffs: tops' diffs = their data give
		// the bottom's data as its diff.
		for _, tb := range top {
			copy(tb.MutableCPUDiff(), tb.CPUData())
		}
		layertest.Backward(t, l, top, []bool{true}, []*blobF64{bottom})
		layertest.CheckClose(t, "slice backward "+c.param, bottom.CPUDiff(), bottom.CPUData(), 0)
	}
}

// TestSliceAcrossChannelsValues is Caffe's TestSliceAcrossChannels: element
// (n, c, h, w) of top i is element (n, c + start_i, h, w) of the bottom.
func TestSliceAcrossChannelsValues(t *testing.T) {
	l := layertest.New[float64](t, `type: "Slice" slice_param { slice_point: 2 slice_point: 8 }`)
	bottom := stGaussBlob(t, 5, 6, 12, 2, 3)
	top := layertest.Blobs[float64](t, 3)
	stRun(t, l, []*blobF64{bottom}, top)
	starts := []int{0, 2, 8}
	for i, tb := range top {
		for n := range 6 {
			for c := range tb.Shape()[1] {
				for h := range 2 {
					for w := range 3 {
						got := tb.CPUData()[tb.Offset(n, c, h, w)]
						want := bottom.CPUData()[bottom.Offset(n, c+starts[i], h, w)]
						if got != want {
							t.Fatalf("top %d (%d,%d,%d,%d) = %v, want %v", i, n, c, h, w, got, want)
						}
					}
				}
			}
		}
	}
}

func TestSliceSingleTopShares(t *testing.T) {
	l := layertest.New[float64](t, `type: "Slice"`)
	bottom := stGaussBlob(t, 1, 2, 3, 4)
	top := layertest.Blob[float64](t)
	stRun(t, l, []*blobF64{bottom}, []*blobF64{top})
	if !stSharesMemory(bottom, top, true) {
		t.Error("with one top the top should share the bottom's data and diff")
	}
}

func TestSliceErrors(t *testing.T) {
	s := `type: "Slice" `
	in := [][]int{{6, 12, 2, 3}}
	stExpectError(t, s+`slice_param { slice_point: 3 slice_point: 3 }`, in, 3, "strictly increasing", "[3 3]")
	stExpectError(t, s+`slice_param { slice_point: 5 slice_point: 2 }`, in, 3, "strictly increasing")
	stExpectError(t, s+`slice_param { slice_point: 0 }`, in, 2, "positive")
	stExpectError(t, s+`slice_param { slice_point: 3 }`, in, 3, "1 slice points for 3 tops")
	stExpectError(t, s+`slice_param { slice_point: 3 slice_point: 13 }`, in, 3, "slice_point 13", "size 12", "6 12 2 3")
	stExpectError(t, s, in, 5, "number of tops (5) should evenly divide", "size 12")
	stExpectError(t, s+`slice_param { axis: 0 slice_dim: 0 }`, in, 2, "not both")
	stExpectError(t, s+`slice_param { slice_dim: 4 }`, in, 2, "slice_dim 4 out of range")
	stExpectError(t, s+`slice_param { axis: 7 }`, in, 2, "axis 7 out of range")
}
