package vision_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "ConvolutionDepthwise/3x3", Bottom: [][]int{{2, 3, 6, 5}},
			Layer: `type: "ConvolutionDepthwise" convolution_param { num_output: 3 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "ConvolutionDepthwise/stride/dilation/nobias", Bottom: [][]int{{2, 4, 9, 7}},
			Layer: `type: "ConvolutionDepthwise" convolution_param { kernel_size: 3 stride: 2 dilation: 2 bias_term: false weight_filler { type: "gaussian" } }`},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "ConvolutionDepthwise" convolution_param { num_output: 8 kernel_size: 3 pad: 1 stride: 2 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`,
			Bottom: [][]int{{4, 8, 15, 13}}, Tol: 1e-3},
	)
}

// ConvolutionDepthwise is a Convolution with group = num_output = channels
// whatever num_output and group say: the same weight shape, and the same
// results on the same weights.
func TestConvolutionDepthwiseIsGroupedConvolution(t *testing.T) {
	dw := layertest.New[float64](t, `type: "ConvolutionDepthwise" convolution_param { num_output: 99 group: 7 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`)
	conv := layertest.New[float64](t, `type: "Convolution" convolution_param { num_output: 5 group: 5 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`)
	x := layertest.Blob[float64](t, 2, 5, 7, 6)
	layertest.FillGaussian(x, 0, 1, 3)
	yd, yc := layertest.Blob[float64](t), layertest.Blob[float64](t)
	layertest.SetUp(t, dw, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{yd})
	layertest.SetUp(t, conv, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{yc})
	if dw.Type() != "ConvolutionDepthwise" {
		t.Errorf("Type() = %q", dw.Type())
	}
	if got := dw.LayerBase().Blobs()[0].ShapeString(); got != conv.LayerBase().Blobs()[0].ShapeString() || got != "5 1 3 3 (45)" {
		t.Fatalf("weights %s, want 5 1 3 3 (45) as the grouped convolution's %s", got, conv.LayerBase().Blobs()[0].ShapeString())
	}
	for i, b := range dw.LayerBase().Blobs() {
		if err := conv.LayerBase().Blobs()[i].CopyFrom(b, false, false); err != nil {
			t.Fatal(err)
		}
	}
	layertest.Forward(t, dw, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{yd})
	layertest.Forward(t, conv, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{yc})
	layertest.CheckClose(t, "depthwise top", yd.CPUData(), yc.CPUData(), 1e-12)
	if yd.ShapeString() != "2 5 7 6 (420)" {
		t.Errorf("top %s", yd.ShapeString())
	}
}
