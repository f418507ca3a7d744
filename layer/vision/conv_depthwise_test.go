package vision_test

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// The direct 3x3 depthwise path (conv_depthwise.go) of Convolution with
// group == channels == num_output: gradient checks over its strides and
// paddings, and float32 (the AVX2 row kernels) against the im2col path.

func init() {
	for _, c := range []struct {
		name, param string
		shape       []int
	}{
		{"s1p0", "stride: 1 pad: 0", []int{2, 3, 6, 5}},
		{"s1p1", "stride: 1 pad: 1", []int{2, 3, 5, 6}},
		{"s2p1", "stride: 2 pad: 1", []int{2, 3, 7, 6}},
		{"s2p0/nobias", "stride: 2 pad: 0 bias_term: false", []int{1, 2, 7, 7}},
		{"s21p2", "stride_h: 2 stride_w: 1 pad: 2", []int{1, 2, 5, 4}},
	} {
		cases.AddGrad(layertest.GradCase{Name: "Convolution/depthwise/" + c.name, Bottom: [][]int{c.shape},
			Layer: fmt.Sprintf(`type: "Convolution" convolution_param { num_output: %d group: %d kernel_size: 3 %s weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`,
				c.shape[1], c.shape[1], c.param)})
	}
}

// The direct path in float32 (AVX2 row kernels where the CPU has them,
// over rows longer and shorter than a vector) against the im2col path
// (force_nd_im2col, which the direct path declines): forward, and
// backward's three gradients.
func TestDepthwiseDirectMatchesIm2col(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"stride: 1 pad: 1", []int{2, 5, 19, 21}},
		{"stride: 1 pad: 0", []int{1, 4, 11, 37}},
		{"stride: 1 pad: 1", []int{2, 4, 7, 7}}, // MobileNet's last planes, in one run each
		{"stride: 1 pad: 2", []int{1, 3, 6, 9}},
		{"stride: 2 pad: 1", []int{2, 5, 20, 33}},
		{"stride: 2 pad: 0", []int{1, 3, 9, 40}},
		{"stride: 2 pad: 1", []int{1, 2, 4, 3}},
		{"stride: 1 pad: 1", []int{1, 3, 9, 45}},
		{"stride: 1 pad: 0", []int{1, 2, 5, 35}},
		{"stride: 2 pad: 1", []int{1, 3, 11, 37}},
		{"stride: 2 pad: 2", []int{1, 2, 8, 18}},
		{"stride_h: 1 stride_w: 2 pad: 1", []int{1, 2, 6, 23}},
		{"stride_h: 2 stride_w: 2 pad_h: 0 pad_w: 1", []int{2, 3, 9, 16}},
	} {
		t.Run(fmt.Sprint(c.param, c.shape), func(t *testing.T) {
			p := fmt.Sprintf(`num_output: %d group: %d kernel_size: 3 %s weight_filler { type: "gaussian" } bias_filler { type: "gaussian" }`, c.shape[1], c.shape[1], c.param)
			direct := layertest.New[float32](t, `type: "Convolution" convolution_param { `+p+` }`)
			ref := layertest.New[float32](t, `type: "Convolution" convolution_param { `+p+` force_nd_im2col: true }`)
			x := layertest.Blob[float32](t, c.shape...)
			layertest.FillGaussian(x, 0, 1, 11)
			yd, yr := layertest.Blob[float32](t), layertest.Blob[float32](t)
			layertest.SetUp(t, direct, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yd})
			layertest.SetUp(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
			for i, b := range direct.LayerBase().Blobs() {
				if err := ref.LayerBase().Blobs()[i].CopyFrom(b, false, false); err != nil {
					t.Fatal(err)
				}
			}
			layertest.Forward(t, direct, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yd})
			layertest.Forward(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
			layertest.CheckClose(t, "top", yd.CPUData(), yr.CPUData(), 1e-5)
			layertest.FillGaussian(yd, 0, 1, 12)
			copy(yr.MutableCPUDiff(), yd.CPUData())
			copy(yd.MutableCPUDiff(), yd.CPUData())
			dxd := make([]float32, x.Count())
			layertest.Backward(t, direct, []*blob.Blob[float32]{yd}, []bool{true}, []*blob.Blob[float32]{x})
			copy(dxd, x.CPUDiff())
			layertest.Backward(t, ref, []*blob.Blob[float32]{yr}, []bool{true}, []*blob.Blob[float32]{x})
			layertest.CheckClose(t, "bottom diff", dxd, x.CPUDiff(), 1e-5)
			for i, b := range direct.LayerBase().Blobs() {
				layertest.CheckClose(t, fmt.Sprintf("param %d diff", i), b.CPUDiff(), ref.LayerBase().Blobs()[i].CPUDiff(), 1e-4)
			}
		})
	}
}

// BenchmarkDepthwiseForward times the direct path's forward pass at
// MobileNet v1's batch-1 shapes, stride 1 and 2. (Summing a stride-1
// pass row by row straight into the top, without the run at the padded
// row length and its copy, measured no faster at 112x112 and slower at
// 56x56: 0.32 -> 0.42 ms.)
func BenchmarkDepthwiseForward(b *testing.B) {
	for _, c := range []struct {
		name  string
		param string
		shape []int
	}{
		{"s1_32x112", "stride: 1 pad: 1", []int{1, 32, 112, 112}},
		{"s1_128x56", "stride: 1 pad: 1", []int{1, 128, 56, 56}},
		{"s1_512x14", "stride: 1 pad: 1", []int{1, 512, 14, 14}},
		{"s2_64x112", "stride: 2 pad: 1", []int{1, 64, 112, 112}},
		{"s2_512x14", "stride: 2 pad: 1", []int{1, 512, 14, 14}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := fmt.Sprintf(`num_output: %d group: %d kernel_size: 3 %s weight_filler { type: "gaussian" }`, c.shape[1], c.shape[1], c.param)
			l := layertest.New[float32](b, `type: "Convolution" convolution_param { `+p+` }`)
			x, y := layertest.Blob[float32](b, c.shape...), layertest.Blob[float32](b)
			layertest.FillGaussian(x, 0, 1, 11)
			layertest.SetUp(b, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			for b.Loop() {
				layertest.Forward(b, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			}
		})
	}
}
