package layertest

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"google.golang.org/protobuf/encoding/prototext"
)

// WithEngine returns the layer text with its type's engine field set to e;
// false for a type without one.
func WithEngine(t *testing.T, text string, e layer.EngineName) (string, bool) {
	p := Param(t, text)
	switch p.GetType() {
	case "Convolution", "Deconvolution":
		if p.ConvolutionParam == nil {
			p.ConvolutionParam = &caffepb.ConvolutionParameter{}
		}
		p.ConvolutionParam.Engine = caffepb.ConvolutionParameter_Engine(e).Enum()
	case "Pooling":
		if p.PoolingParam == nil {
			p.PoolingParam = &caffepb.PoolingParameter{}
		}
		p.PoolingParam.Engine = caffepb.PoolingParameter_Engine(e).Enum()
	case "LRN":
		if p.LrnParam == nil {
			p.LrnParam = &caffepb.LRNParameter{}
		}
		p.LrnParam.Engine = caffepb.LRNParameter_Engine(e).Enum()
	case "ReLU":
		if p.ReluParam == nil {
			p.ReluParam = &caffepb.ReLUParameter{}
		}
		p.ReluParam.Engine = caffepb.ReLUParameter_Engine(e).Enum()
	case "Sigmoid":
		if p.SigmoidParam == nil {
			p.SigmoidParam = &caffepb.SigmoidParameter{}
		}
		p.SigmoidParam.Engine = caffepb.SigmoidParameter_Engine(e).Enum()
	case "Softmax":
		if p.SoftmaxParam == nil {
			p.SoftmaxParam = &caffepb.SoftmaxParameter{}
		}
		p.SoftmaxParam.Engine = caffepb.SoftmaxParameter_Engine(e).Enum()
	case "TanH":
		if p.TanhParam == nil {
			p.TanhParam = &caffepb.TanHParameter{}
		}
		p.TanhParam.Engine = caffepb.TanHParameter_Engine(e).Enum()
	default:
		return text, false
	}
	return prototext.Format(p), true
}
