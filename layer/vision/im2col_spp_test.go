package vision_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Im2col", Layer: `type: "Im2col" convolution_param { kernel_size: 3 stride: 2 }`, Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Im2col/dilated_rect", Layer: `type: "Im2col" convolution_param { kernel_h: 3 kernel_w: 2 stride: 2 pad_h: 1 dilation: 2 }`,
			Bottom: [][]int{{2, 3, 6, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "SPP/MAX", Layer: `type: "SPP" spp_param { pyramid_height: 3 }`, Bottom: [][]int{{2, 3, 9, 8}}, Mode: layertest.Exhaustive, Step: 1e-4, Threshold: 1e-2},
		layertest.GradCase{Name: "SPP/AVE", Layer: `type: "SPP" spp_param { pyramid_height: 2 pool: AVE }`, Bottom: [][]int{{2, 2, 7, 6}}, Mode: layertest.Exhaustive, Step: 1e-4, Threshold: 1e-2},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Im2col" convolution_param { kernel_size: 3 stride: 2 pad: 1 }`, Bottom: [][]int{{2, 3, 16, 15}}},
		layertest.Parity{Layer: `type: "SPP" spp_param { pyramid_height: 3 }`, Bottom: [][]int{{2, 3, 13, 11}}},
	)
}

// Caffe's Im2colLayerTest: the top is 2 x 27 x 2 x 2, and its
// (channel c, kernel k) planes hold the image at stride 2.
func TestIm2colForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Im2col" convolution_param { kernel_size: 3 stride: 2 }`)
	x := layertest.Blob[float64](t, 2, 3, 6, 5)
	layertest.FillGaussian(x, 0, 1, 1)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{2, 27, 2, 2}) {
		t.Fatalf("top %v", y.Shape())
	}
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for n := range 2 {
		for c := range 3 {
			for kh := range 3 {
				for kw := range 3 {
					for oh := range 2 {
						for ow := range 2 {
							got := y.CPUData()[((n*27+(c*9+kh*3+kw))*2+oh)*2+ow]
							want := x.CPUData()[((n*3+c)*6+oh*2+kh)*5+ow*2+kw]
							if got != want {
								t.Fatalf("n%d c%d k(%d,%d) o(%d,%d): %v, want %v", n, c, kh, kw, oh, ow, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// Caffe's SPPLayerTest: shapes for pyramid heights 1 and 3, and the first
// level of a MAX pyramid is each channel's maximum.
func TestSPP(t *testing.T) {
	x := layertest.Blob[float64](t, 2, 3, 9, 8)
	layertest.FillGaussian(x, 0, 1, 3)
	l := layertest.New[float64](t, `type: "SPP" spp_param { pyramid_height: 3 }`)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{2, 3 * (1 + 4 + 16)}) {
		t.Fatalf("top %v", y.Shape())
	}
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for n := range 2 {
		for c := range 3 {
			plane := x.CPUData()[(n*3+c)*72 : (n*3+c+1)*72]
			if got := y.CPUData()[n*63+c]; got != slices.Max(plane) {
				t.Errorf("level 0 of item %d channel %d = %v, want %v", n, c, got, slices.Max(plane))
			}
		}
	}
	one := layertest.New[float64](t, `type: "SPP" spp_param { pyramid_height: 1 }`)
	layertest.SetUp(t, one, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{2, 3, 1, 1}) {
		t.Errorf("pyramid_height 1: top %v", y.Shape())
	}
	// A new input size rebuilds the poolings.
	x2 := layertest.Blob[float64](t, 2, 3, 13, 11)
	layertest.Forward(t, l, []*blob.Blob[float64]{x2}, []*blob.Blob[float64]{y})
	if !slices.Equal(y.Shape(), []int{2, 63}) {
		t.Errorf("after resizing: top %v", y.Shape())
	}
}
