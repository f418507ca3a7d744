package vision

import (
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "ConvolutionDepthwise",
		New32: newConvolutionDepthwise[float32], New64: newConvolutionDepthwise[float64],
		EngineField: convolutionEngineField,
		Engines:     convolutionEngines,
		CUDAGraph:   true,
		ONNX:        layer.ONNXConverted,
		NoGolden:    "BVLC Caffe has no such layer: it is the MobileNet ports' (BVLC pull request 5665)",
	})
}

// newConvolutionDepthwise makes the Caffe forks' ConvolutionDepthwise
// (BVLC pull request 5665, used by the Caffe MobileNet ports): one filter
// per input channel, as many outputs as inputs, whatever num_output and
// group say; weights C x 1 x kh x kw and a bias of C, so its caffemodels
// are those of a Convolution with group = num_output = channels. It is
// that Convolution, with the same engines (cuDNN's grouped convolution,
// our kernels, the CPU half), under its own type name.
func newConvolutionDepthwise[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &convolutionLayer[T]{}
	l.depthwise = true
	if err := newConvBase(&l.convBase, p, false); err != nil {
		return nil, err
	}
	return l, nil
}
