package utility_test

import (
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	// Caffe's test_slice_layer: exhaustive checks, step 1e-2, threshold 1e-3.
	cases.AddGrad(
		layertest.GradCase{Name: "Slice/trivial", Layer: `type: "Slice" bottom: "a" top: "b"`,
			Bottom: [][]int{{2, 3, 2, 3}}},
		layertest.GradCase{Name: "Slice/num", Layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { slice_dim: 0 }`,
			Bottom: [][]int{{6, 2, 2, 3}}},
		layertest.GradCase{Name: "Slice/channels/points", Layer: `type: "Slice" bottom: "a" top: "b" top: "c" top: "d" slice_param { slice_point: 1 slice_point: 4 }`,
			Bottom: [][]int{{2, 6, 2, 3}}},
		layertest.GradCase{Name: "Slice/num/points", Layer: `type: "Slice" bottom: "a" top: "b" top: "c" slice_param { axis: 0 slice_point: 1 }`,
			Bottom: [][]int{{3, 4, 2, 3}}},
		layertest.GradCase{Name: "Slice/channels/equal", Layer: `type: "Slice" bottom: "a" top: "b" top: "c"`,
			Bottom: [][]int{{2, 6, 3, 2}}},
	)
	cases.AddParity(
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
		layertest.SetUp(t, l, []*blob.Blob[float64]{layertest.GaussBlob(t, 1, 6, 12, 2, 3)}, top)
		for i, tb := range top {
			layertest.CheckShape(t, c.param+" top "+strconv.Itoa(i), tb, c.want[i]...)
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
		bottom := layertest.GaussBlob(t, 3, 6, 12, 2, 3)
		top := layertest.Blobs[float64](t, c.nTop)
		layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, top)
		var parts [][]float64
		var widths []int
		for _, tb := range top {
			parts = append(parts, tb.CPUData())
			widths = append(widths, tb.Shape()[c.axis])
		}
		// Joining the tops again must give back the bottom.
		outer, inner := bottom.CountRange(0, c.axis), bottom.CountFrom(c.axis+1)
		layertest.CheckClose(t, "slice "+c.param, layertest.AxisJoin(parts, widths, outer, inner), bottom.CPUData(), 0)

		// Backward concatenates the diffs: tops' diffs = their data give
		// the bottom's data as its diff.
		for _, tb := range top {
			copy(tb.MutableCPUDiff(), tb.CPUData())
		}
		layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float64]{bottom})
		layertest.CheckClose(t, "slice backward "+c.param, bottom.CPUDiff(), bottom.CPUData(), 0)
	}
}

// TestSliceAcrossChannelsValues is Caffe's TestSliceAcrossChannels: element
// (n, c, h, w) of top i is element (n, c + start_i, h, w) of the bottom.
func TestSliceAcrossChannelsValues(t *testing.T) {
	l := layertest.New[float64](t, `type: "Slice" slice_param { slice_point: 2 slice_point: 8 }`)
	bottom := layertest.GaussBlob(t, 5, 6, 12, 2, 3)
	top := layertest.Blobs[float64](t, 3)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, top)
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
	bottom := layertest.GaussBlob(t, 1, 2, 3, 4)
	top := layertest.Blob[float64](t)
	layertest.SetUpForward(t, l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top})
	if !layertest.SharesMemory(bottom, top, true) {
		t.Error("with one top the top should share the bottom's data and diff")
	}
}

func TestSliceErrors(t *testing.T) {
	s := `type: "Slice" `
	in := [][]int{{6, 12, 2, 3}}
	layertest.ExpectSetUpError(t, s+`slice_param { slice_point: 3 slice_point: 3 }`, in, 3, "strictly increasing", "[3 3]")
	layertest.ExpectSetUpError(t, s+`slice_param { slice_point: 5 slice_point: 2 }`, in, 3, "strictly increasing")
	layertest.ExpectSetUpError(t, s+`slice_param { slice_point: 0 }`, in, 2, "positive")
	layertest.ExpectSetUpError(t, s+`slice_param { slice_point: 3 }`, in, 3, "1 slice points for 3 tops")
	layertest.ExpectSetUpError(t, s+`slice_param { slice_point: 3 slice_point: 13 }`, in, 3, "slice_point 13", "size 12", "6 12 2 3")
	layertest.ExpectSetUpError(t, s, in, 5, "number of tops (5) should evenly divide", "size 12")
	layertest.ExpectSetUpError(t, s+`slice_param { axis: 0 slice_dim: 0 }`, in, 2, "not both")
	layertest.ExpectSetUpError(t, s+`slice_param { slice_dim: 4 }`, in, 2, "slice_dim 4 out of range")
	layertest.ExpectSetUpError(t, s+`slice_param { axis: 7 }`, in, 2, "axis 7 out of range")
}
