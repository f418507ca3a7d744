package vision_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	crop := `type: "Crop" bottom: "a" bottom: "b" top: "c" `
	// Caffe's test_crop_layer: exhaustive, step 1e-2, threshold 1e-3, bottom
	// 0 only (bottom 1 only gives the shape).
	cases.AddGrad(
		layertest.GradCase{Name: "Crop/all", Layer: crop + `crop_param { axis: 0 }`,
			Bottom: [][]int{{2, 4, 5, 4}, {2, 3, 4, 2}}, FirstBottomOnly: true},
		layertest.GradCase{Name: "Crop/all/offset", Layer: crop + `crop_param { axis: 0 offset: 0 offset: 1 offset: 1 offset: 2 }`,
			Bottom: [][]int{{2, 4, 5, 4}, {2, 3, 4, 2}}, FirstBottomOnly: true},
		layertest.GradCase{Name: "Crop/HW", Layer: crop + `crop_param { offset: 1 offset: 2 }`,
			Bottom: [][]int{{2, 4, 5, 4}, {2, 3, 4, 2}}, FirstBottomOnly: true},
		layertest.GradCase{Name: "Crop/5D", Layer: crop + `crop_param { axis: 2 offset: 1 offset: 2 offset: 0 }`,
			Bottom: [][]int{{2, 2, 4, 5, 4}, {2, 2, 2, 3, 3}}, FirstBottomOnly: true},
		layertest.GradCase{Name: "Crop/single-offset", Layer: crop + `crop_param { axis: 1 offset: 1 }`,
			Bottom: [][]int{{2, 4, 5, 4}, {2, 3, 4, 2}}, FirstBottomOnly: true},
	)
	cases.AddParity(
		layertest.Parity{Layer: crop + `crop_param { offset: 3 offset: 5 }`, Bottom: [][]int{{4, 5, 40, 37}, {1, 1, 30, 25}}},
		layertest.Parity{Layer: crop + `crop_param { axis: 1 offset: 2 }`, Bottom: [][]int{{4, 9, 30, 31}, {4, 6, 25, 20}}},
		layertest.Parity{Layer: crop + `crop_param { axis: 0 offset: 1 offset: 0 offset: 2 offset: 3 offset: 1 }`,
			Bottom: [][]int{{3, 4, 12, 11, 10}, {2, 4, 9, 8, 7}}},
	)
}

// stNaiveCrop is the definition: top element at index x is bottom 0's element
// at x + offsets.
func stNaiveCrop(in []float64, inShape, outShape, offsets []int) []float64 {
	n := 1
	for _, d := range outShape {
		n *= d
	}
	out := make([]float64, n)
	for i := range out {
		rem, src, stride := i, 0, 1
		for a := len(outShape) - 1; a >= 0; a-- {
			c := rem % outShape[a]
			rem /= outShape[a]
			src += (c + offsets[a]) * stride
			stride *= inShape[a]
		}
		out[i] = in[src]
	}
	return out
}

func TestCropSetUp(t *testing.T) {
	cases := []struct {
		param string
		want  []int
	}{
		{`crop_param { axis: 0 }`, []int{2, 3, 4, 2}},
		{``, []int{2, 4, 4, 2}},
		{`crop_param { axis: -1 }`, []int{2, 4, 5, 2}},
		{`crop_param { axis: 1 offset: 1 }`, []int{2, 3, 4, 2}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Crop" `+c.param)
		top := layertest.Blob[float64](t)
		layertest.SetUp(t, l, layertest.GaussBlobs(t, []int{2, 4, 5, 4}, []int{2, 3, 4, 2}), []*blob.Blob[float64]{top})
		layertest.CheckShape(t, c.param, top, c.want...)
	}
}

func TestCropForwardBackward(t *testing.T) {
	cases := []struct {
		param    string
		in, ref  []int
		offsets  []int
		outShape []int
	}{
		{`crop_param { axis: 0 }`, []int{2, 4, 5, 4}, []int{2, 3, 4, 2}, []int{0, 0, 0, 0}, []int{2, 3, 4, 2}},
		{`crop_param { axis: 0 offset: 0 offset: 1 offset: 1 offset: 2 }`, []int{2, 4, 5, 4}, []int{2, 3, 4, 2}, []int{0, 1, 1, 2}, []int{2, 3, 4, 2}},
		{`crop_param { offset: 1 offset: 2 }`, []int{2, 4, 5, 4}, []int{2, 3, 4, 2}, []int{0, 0, 1, 2}, []int{2, 4, 4, 2}},
		{`crop_param { axis: 1 offset: 1 }`, []int{2, 4, 5, 4}, []int{2, 3, 4, 2}, []int{0, 1, 1, 1}, []int{2, 3, 4, 2}},
		{`crop_param { axis: 2 offset: 1 offset: 2 offset: 0 }`, []int{2, 2, 4, 5, 4}, []int{2, 2, 2, 3, 3}, []int{0, 0, 1, 2, 0}, []int{2, 2, 2, 3, 3}},
		{`crop_param { axis: 3 offset: 2 }`, []int{1, 2, 3, 5}, []int{9, 9, 9, 3}, []int{0, 0, 0, 2}, []int{1, 2, 3, 3}},
	}
	for _, c := range cases {
		l := layertest.New[float64](t, `type: "Crop" `+c.param)
		bottom := layertest.GaussBlobs(t, c.in, c.ref)
		top := layertest.Blob[float64](t)
		layertest.SetUpForward(t, l, bottom, []*blob.Blob[float64]{top})
		layertest.CheckShape(t, c.param, top, c.outShape...)
		want := stNaiveCrop(bottom[0].CPUData(), c.in, c.outShape, c.offsets)
		layertest.CheckClose(t, "crop "+c.param, top.CPUData(), want, 0)

		// Backward puts the top's diff into the window and zeroes the rest:
		// cropping the bottom's diff again gives the top's diff back, and
		// the diff sums to the same total.
		for j := range top.Count() {
			top.MutableCPUDiff()[j] = float64(j + 1)
		}
		for j := range bottom[0].Count() {
			bottom[0].MutableCPUDiff()[j] = -100 // must be overwritten
			bottom[1].MutableCPUDiff()[j%bottom[1].Count()] = -100
		}
		layertest.Backward(t, l, []*blob.Blob[float64]{top}, []bool{true, true}, bottom)
		layertest.CheckClose(t, "crop backward "+c.param, stNaiveCrop(bottom[0].CPUDiff(), c.in, c.outShape, c.offsets), top.CPUDiff(), 0)
		var sum, want2 float64
		for _, v := range bottom[0].CPUDiff() {
			sum += v
		}
		for _, v := range top.CPUDiff() {
			want2 += v
		}
		if sum != want2 {
			t.Errorf("%s: bottom diff sums to %v, want %v (the window only)", c.param, sum, want2)
		}
		for _, v := range bottom[1].CPUDiff() {
			if v != 0 {
				t.Fatalf("%s: the shape bottom's diff is %v, want 0", c.param, v)
			}
		}
	}
}

func TestCropErrors(t *testing.T) {
	in := []int{2, 4, 5, 4}
	layertest.ExpectSetUpError(t, `type: "Crop"`, [][]int{in, {2, 4, 6, 4}}, 1, "crop for axis 2 is out of bounds", "size 6 at offset 0", "2 4 5 4", "2 4 6 4")
	layertest.ExpectSetUpError(t, `type: "Crop" crop_param { offset: 2 }`, [][]int{in, {2, 3, 4, 2}}, 1, "crop for axis 2 is out of bounds", "size 4 at offset 2")
	layertest.ExpectSetUpError(t, `type: "Crop" crop_param { offset: 0 offset: 3 }`, [][]int{in, {2, 3, 4, 2}}, 1, "axis 3", "size 2 at offset 3")
	layertest.ExpectSetUpError(t, `type: "Crop" crop_param { offset: 0 offset: 1 offset: 1 }`, [][]int{in, {2, 3, 4, 2}}, 1, "3 offsets", "number of offsets must be 0, 1 or equal to the number of axes cropped (2)")
	layertest.ExpectSetUpError(t, `type: "Crop" crop_param { axis: 4 }`, [][]int{in, {2, 3, 4, 2}}, 1, "crop_param.axis")
	layertest.ExpectSetUpError(t, `type: "Crop"`, [][]int{in, {2, 3, 4}}, 1, "fewer axes")
	layertest.ExpectSetUpError(t, `type: "Crop"`, [][]int{in}, 1, "takes 2 bottom")
}
