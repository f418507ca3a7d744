package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Convolution",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newConvolution[float32], New64: newConvolution[float64],
		EngineField: convolutionEngineField,
		Engines:     convolutionEngines,
		CUDAGraph:   true,
		FusesNext:   []string{"ReLU"},
		ONNX:        layer.ONNXConverted,
	})
}

// convolutionEngineField reads convolution_param.engine, the engine field
// of the convolutions.
func convolutionEngineField(p *caffepb.LayerParameter) layer.EngineName {
	return layer.EngineName(p.GetConvolutionParam().GetEngine())
}

// convolutionEngines are the engines of Convolution and of
// ConvolutionDepthwise, which is a Convolution under another name.
var convolutionEngines = []layer.EngineDef{
	layer.GPUEngine(newConvolutionGPU[float32], newConvolutionGPU[float64]),
	layer.CuDNNEngine(false, acceptsConvDNN, newConvolutionDNN[float32], newConvolutionDNN[float64]),
}

// Convolution convolves each bottom with num_output learned filters
// (im2col + gemm, as Caffe). kernel_size, pad, stride and dilation are
// given once or per spatial axis (or as the 2-D _h/_w fields); group splits
// channels and outputs into independent groups; axis (default 1) is the
// channel axis and every axis after it is spatial, so 1-D, 2-D and N-D
// convolutions share this layer.
type convolutionLayer[T layer.Float] struct{ convBase[T] }

func newConvolution[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &convolutionLayer[T]{}
	if err := newConvBase(&l.convBase, p, false); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Convolution", or "ConvolutionDepthwise".
func (l *convolutionLayer[T]) Type() string {
	if l.depthwise {
		return "ConvolutionDepthwise"
	}
	return "Convolution"
}

// ForwardCPU convolves on the host, images spread over the cores.
func (l *convolutionLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return l.forwardCPU(bottom, top)
}

// BackwardCPU computes the gradients on the host, images spread over the
// cores.
func (l *convolutionLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return l.backwardCPU(top, propagateDown, bottom)
}

// convForward runs the forward pass image by image on one device, with
// l.col as the column buffer (the GPU's path when its batched one does
// not apply).
func convForward[T layer.Float, A any](l *convBase[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	forwardImages(l, d, bottom, top, 0, l.num, d.MutableData(l.col))
	return d.Err()
}

// convBackward is convForward's backward pass.
func convBackward[T layer.Float, A any](l *convBase[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	var wdiff, bdiff A
	if l.ParamPropagateDown(0) {
		wdiff = d.MutableDiff(l.Blobs()[0])
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		bdiff = d.MutableDiff(l.Blobs()[1])
	}
	backwardImages(l, d, top, propagateDown, bottom, 0, l.num, d.MutableData(l.col), wdiff, bdiff)
	return d.Err()
}

// forwardImages computes the tops of images [lo, hi) of every bottom with
// col as the column buffer: convolution, or deconvolution when l.reverse.
func forwardImages[T layer.Float, A any](l *convBase[T], d device.View[T, A], bottom, top []*blob.Blob[T], lo, hi int, col A) {
	weights := d.Data(l.Blobs()[0])
	for i := range bottom {
		in, out := d.Data(bottom[i]), d.MutableData(top[i])
		for n := lo; n < hi; n++ {
			output := d.Offset(out, n*l.topDim)
			if l.reverse {
				backwardGemm(l, d, d.Offset(in, n*l.bottomDim), weights, output, col)
			} else {
				forwardGemm(l, d, d.Offset(in, n*l.bottomDim), weights, output, col, false)
			}
			if l.biasTerm {
				forwardBias(l, d, output, d.Data(l.Blobs()[1]))
			}
		}
	}
}

// topGradients adds the bias gradient of top's images [lo, hi) to bdiff
// (where it is wanted) and returns what the other gradients of the pair
// read and write: top's diff, bottom's data and, where propagate asks for
// it, bottom's diff (else A's zero value). ok is false where neither the
// weight gradient nor the bottom's is wanted.
func topGradients[T layer.Float, A any](l *convBase[T], d device.View[T, A], top, bottom *blob.Blob[T], propagate bool, lo, hi int, bdiff A) (dy, x, dx A, ok bool) {
	dy = d.Diff(top)
	if l.biasTerm && l.ParamPropagateDown(1) {
		for n := lo; n < hi; n++ {
			backwardBias(l, d, bdiff, d.Offset(dy, n*l.topDim))
		}
	}
	if !l.ParamPropagateDown(0) && !propagate {
		return dy, x, dx, false
	}
	x = d.Data(bottom)
	if propagate {
		dx = d.MutableDiff(bottom)
	}
	return dy, x, dx, true
}

// backwardImages accumulates the gradients of images [lo, hi): the weight
// gradient into wdiff and the bias gradient into bdiff when they are
// wanted (ParamPropagateDown), the bottoms' where propagateDown says.
func backwardImages[T layer.Float, A any](l *convBase[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T], lo, hi int, col, wdiff, bdiff A) {
	weights := d.Data(l.Blobs()[0])
	needW := l.ParamPropagateDown(0)
	for i := range top {
		dy, x, dx, ok := topGradients(l, d, top[i], bottom[i], propagateDown[i], lo, hi, bdiff)
		if !ok {
			continue
		}
		for n := lo; n < hi; n++ {
			xn, dyn := d.Offset(x, n*l.bottomDim), d.Offset(dy, n*l.topDim)
			if l.reverse {
				if needW {
					weightGemm(l, d, dyn, xn, wdiff, col)
				}
				if propagateDown[i] {
					// weightGemm just left im2col(dy) in the column buffer.
					forwardGemm(l, d, dyn, weights, d.Offset(dx, n*l.bottomDim), col, needW)
				}
				continue
			}
			if needW {
				weightGemm(l, d, xn, dyn, wdiff, col)
			}
			if propagateDown[i] {
				backwardGemm(l, d, dyn, weights, d.Offset(dx, n*l.bottomDim), col)
			}
		}
	}
}
