package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Deconvolution",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newDeconvolution[float32], New64: newDeconvolution[float64],
		EngineField: convolutionEngineField,
		Engines:     []layer.EngineDef{layer.GPUEngine(newDeconvolutionGPU[float32], newDeconvolutionGPU[float64])},
		CUDAGraph:   true,
		ONNX:        layer.ONNXConverted,
	})
}

// Deconvolution is the transpose of Convolution (its forward pass is
// convolution's backward pass and vice versa), so it upsamples: each
// spatial output is stride*(in-1) + dilation*(kernel-1)+1 - 2*pad. It takes
// convolution_param; the weights are channels x num_output/group x kernel.
type deconvolutionLayer[T layer.Float] struct{ convBase[T] }

func newDeconvolution[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &deconvolutionLayer[T]{}
	if err := newConvBase(&l.convBase, p, true); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Deconvolution".
func (*deconvolutionLayer[T]) Type() string { return "Deconvolution" }

// ForwardCPU deconvolves on the host, images spread over the cores.
func (l *deconvolutionLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return l.forwardCPU(bottom, top)
}

// BackwardCPU computes the gradients on the host, images spread over the
// cores.
func (l *deconvolutionLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return l.backwardCPU(top, propagateDown, bottom)
}
