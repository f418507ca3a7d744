package vision

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// convBase is what Convolution and Deconvolution share (Caffe's
// BaseConvolutionLayer): the parameters, the weights and bias, and the
// im2col + gemm arithmetic, written once for both devices. Deconvolution
// is convolution with forward and backward swapped (reverse).
type convBase[T layer.Float] struct {
	layer.Base[T]
	reverse   bool // Deconvolution
	depthwise bool // ConvolutionDepthwise: one filter per channel

	channelAxis, numSpatial       int
	kernel, stride, pad, dilation []int
	is1x1                         bool
	channels, numOutput, group    int
	convInChannels                int // channels im2col reads
	convOutChannels               int // channels the gemm writes
	biasTerm                      bool
	kernelDim, weightOffset       int

	// Set by Reshape.
	num                        int // images: the count before the channel axis
	bottomDim, topDim          int // elements of one image in bottom and top
	convOutSpatial, outSpatial int
	colOffset, outputOffset    int
	geo                        mathfn.ConvGeometry
	outShape, topShape         []int // reused by every Reshape
	col                        *blob.Blob[T]
	biasMultiplier             *blob.Blob[T]

	cpu  convCPU[T]  // the host's parallel passes (conv_cpu.go)
	dw   dwConv[T]   // the host's direct depthwise path (conv_depthwise.go)
	fold convFold[T] // an inference plan's folded weights (conv_fold.go)
	// sib are the siblings a lead computes with its folded pass; lead is
	// the lead computing this one's, which is its sibling number leadIdx
	// (conv_siblings.go).
	sib     *convSiblings[T]
	lead    *convBase[T]
	leadIdx int
}

// perAxis expands one of Caffe's repeated per-axis fields: given once it
// applies to every axis, or it is given once per axis; the 2-D _h/_w form
// may replace it. def is used when nothing is given (def < 0: required).
func perAxis(name, hw string, values []uint32, h, w *uint32, numSpatial, def int) ([]int, error) {
	out := make([]int, numSpatial)
	if h != nil || w != nil {
		if numSpatial != 2 {
			return nil, fmt.Errorf("%s_h & %s_w can only be used for 2D convolution, this one has %d spatial axes", hw, hw, numSpatial)
		}
		if len(values) != 0 {
			return nil, fmt.Errorf("either %s or %s_h/w should be specified, not both", name, hw)
		}
		if (h == nil || w == nil) && hw != "pad" {
			return nil, fmt.Errorf("%s_h and %s_w must both be given", hw, hw)
		}
		// pad_h and pad_w default to 0 in Caffe's schema: one alone is fine.
		for i, v := range []*uint32{h, w} {
			if v != nil {
				out[i] = int(*v)
			}
		}
		return out, nil
	}
	switch {
	case len(values) == 0 && def >= 0:
		for i := range out {
			out[i] = def
		}
	case len(values) == 1 || len(values) == numSpatial:
		for i := range out {
			out[i] = int(values[min(i, len(values)-1)])
		}
	default:
		return nil, fmt.Errorf("%s must be specified once, or once per spatial dimension (%s specified %d times; %d spatial dims)",
			name, name, len(values), numSpatial)
	}
	return out, nil
}

// convWindow reads convolution_param's kernel, stride, pad and dilation
// for numSpatial axes (Convolution, Deconvolution and Im2col read them
// alike).
func convWindow(cp *caffepb.ConvolutionParameter, numSpatial int) (kernel, stride, pad, dilation []int, err error) {
	if kernel, err = perAxis("kernel_size", "kernel", cp.GetKernelSize(), cp.KernelH, cp.KernelW, numSpatial, -1); err != nil {
		return
	}
	if stride, err = perAxis("stride", "stride", cp.GetStride(), cp.StrideH, cp.StrideW, numSpatial, 1); err != nil {
		return
	}
	if pad, err = perAxis("pad", "pad", cp.GetPad(), cp.PadH, cp.PadW, numSpatial, 0); err != nil {
		return
	}
	dilation, err = perAxis("dilation", "dilation", cp.GetDilation(), nil, nil, numSpatial, 1)
	return
}

// setUp reads the convolution parameters for the bottom's shape and
// creates (or checks) the weights and bias.
func (l *convBase[T]) setUp(bottom *blob.Blob[T]) error {
	cp := l.Param().GetConvolutionParam()
	var err error
	if l.channelAxis, err = bottom.CanonicalAxisIndex(int(cp.GetAxis())); err != nil {
		return err
	}
	l.numSpatial = bottom.NumAxes() - l.channelAxis - 1
	if l.numSpatial < 1 || l.numSpatial > mathfn.MaxSpatialAxes {
		return fmt.Errorf("bottom %s has %d spatial axes after channel axis %d, want 1 to %d", bottom.ShapeString(), l.numSpatial, l.channelAxis, mathfn.MaxSpatialAxes)
	}
	if l.kernel, l.stride, l.pad, l.dilation, err = convWindow(cp, l.numSpatial); err != nil {
		return err
	}
	l.is1x1 = true
	for i := range l.numSpatial {
		if l.kernel[i] <= 0 {
			return fmt.Errorf("filter dimensions must be nonzero: kernel %v", l.kernel)
		}
		if l.stride[i] <= 0 {
			return fmt.Errorf("stride dimensions must be nonzero: stride %v", l.stride)
		}
		if l.dilation[i] <= 0 {
			return fmt.Errorf("dilation dimensions must be nonzero: dilation %v", l.dilation)
		}
		l.is1x1 = l.is1x1 && l.kernel[i] == 1 && l.stride[i] == 1 && l.pad[i] == 0
	}
	l.channels = bottom.Shape()[l.channelAxis]
	l.numOutput, l.group, l.biasTerm = int(cp.GetNumOutput()), int(cp.GetGroup()), cp.GetBiasTerm()
	if l.depthwise {
		// As the forks' layer: num_output and group are the channels,
		// whatever the parameter says.
		l.numOutput, l.group = l.channels, l.channels
	}
	if l.numOutput <= 0 {
		return errors.New("convolution_param.num_output must be set and positive")
	}
	if l.group <= 0 || l.channels%l.group != 0 {
		return fmt.Errorf("group %d must divide the %d input channels", l.group, l.channels)
	}
	if l.numOutput%l.group != 0 {
		return fmt.Errorf("number of outputs %d should be a multiple of group %d", l.numOutput, l.group)
	}
	l.convOutChannels, l.convInChannels = l.numOutput, l.channels
	if l.reverse {
		l.convOutChannels, l.convInChannels = l.channels, l.numOutput
	}
	weightShape := append([]int{l.convOutChannels, l.convInChannels / l.group}, l.kernel...)
	if err := l.setUpParams(weightShape); err != nil {
		return err
	}
	l.kernelDim = l.Blobs()[0].CountFrom(1)
	l.weightOffset = l.convOutChannels * l.kernelDim / l.group
	return nil
}

func (l *convBase[T]) setUpParams(weightShape []int) error {
	if len(l.Blobs()) > 0 {
		if l.biasTerm {
			return l.CheckParamShapes([]string{"weight", "bias"}, weightShape, []int{l.numOutput})
		}
		return l.CheckParamShapes([]string{"weight"}, weightShape)
	}
	cp := l.Param().GetConvolutionParam()
	w, err := l.NewParamBlob(cp.GetWeightFiller(), weightShape...)
	if err != nil {
		return fmt.Errorf("weight filler: %w", err)
	}
	l.AddBlob(w)
	if l.biasTerm {
		b, err := l.NewParamBlob(cp.GetBiasFiller(), l.numOutput)
		if err != nil {
			return fmt.Errorf("bias filler: %w", err)
		}
		l.AddBlob(b)
	}
	return nil
}

// outputShape computes the top's spatial shape: the convolution output
// size, or for deconvolution stride*(in-1) + extent - 2*pad. A kernel
// larger than the padded input is an error.
func (l *convBase[T]) outputShape(in []int) ([]int, error) {
	out := slices.Grow(l.outShape[:0], len(in))[:len(in)]
	l.outShape = out
	for i, d := range in {
		extent := l.dilation[i]*(l.kernel[i]-1) + 1
		if l.reverse {
			out[i] = l.stride[i]*(d-1) + extent - 2*l.pad[i]
		} else {
			out[i] = mathfn.ConvOutputSize(d, l.kernel[i], l.pad[i], l.stride[i], l.dilation[i])
			if d+2*l.pad[i] < extent {
				out[i] = 0
			}
		}
		if out[i] <= 0 {
			return nil, fmt.Errorf("kernel extent %d (kernel %d, dilation %d) does not fit the input of %d with pad %d on spatial axis %d",
				extent, l.kernel[i], l.dilation[i], d, l.pad[i], i)
		}
	}
	return out, nil
}

// reshape sizes the tops and the column buffer for the bottoms.
func (l *convBase[T]) reshape(bottom, top []*blob.Blob[T]) error {
	b0 := bottom[0]
	if b0.NumAxes() != l.channelAxis+1+l.numSpatial {
		return fmt.Errorf("bottom num_axes may not change: %s, set up with %d", b0.ShapeString(), l.channelAxis+1+l.numSpatial)
	}
	if b0.Shape()[l.channelAxis] != l.channels {
		return fmt.Errorf("input size incompatible with convolution kernel: %d channels in %s, set up for %d", b0.Shape()[l.channelAxis], b0.ShapeString(), l.channels)
	}
	for i, b := range bottom[1:] {
		if !b.SameShape(b0) {
			return fmt.Errorf("shape mismatch - bottom[0]: %s vs. bottom[%d]: %s", b0.ShapeString(), i+1, b.ShapeString())
		}
	}
	l.num = b0.CountRange(0, l.channelAxis)
	in := b0.Shape()[l.channelAxis+1:]
	out, err := l.outputShape(in)
	if err != nil {
		return err
	}
	l.topShape = append(append(append(l.topShape[:0], b0.Shape()[:l.channelAxis]...), l.numOutput), out...)
	for _, t := range top {
		if err := t.Reshape(l.topShape); err != nil {
			return err
		}
	}
	// im2col runs on the convolution's input side: the bottom for
	// convolution, the top for deconvolution.
	imSpatial, colSpatial := in, out
	if l.reverse {
		imSpatial, colSpatial = out, in
	}
	// In and Out keep their arrays from pass to pass: no allocation.
	l.geo = mathfn.ConvGeometry{Channels: l.convInChannels, In: append(l.geo.In[:0], imSpatial...), Out: append(l.geo.Out[:0], colSpatial...),
		Kernel: l.kernel, Pad: l.pad, Stride: l.stride, Dilation: l.dilation,
		ForceND: l.Param().GetConvolutionParam().GetForceNdIm2Col()}
	if err := l.geo.Validate(); err != nil {
		return err
	}
	l.convOutSpatial = prodInts(colSpatial)
	l.outSpatial = prodInts(out)
	l.colOffset = l.kernelDim * l.convOutSpatial
	l.outputOffset = l.convOutChannels * l.convOutSpatial / l.group
	l.bottomDim = b0.CountFrom(l.channelAxis)
	l.topDim = top[0].CountFrom(l.channelAxis)
	if l.col == nil {
		if l.col, err = l.NewBlob(); err != nil {
			return err
		}
	}
	if err := l.col.Reshape([]int{l.kernelDim * l.group, l.convOutSpatial}); err != nil {
		return err
	}
	if l.biasTerm {
		if err := kit.Ones(l, &l.biasMultiplier, l.outSpatial); err != nil {
			return err
		}
	}
	return nil
}

func prodInts(v []int) int {
	p := 1
	for _, d := range v {
		p *= d
	}
	return p
}

// The arithmetic below is Caffe's forward_*_gemm, backward_*_gemm,
// weight_*_gemm and the bias helpers, for one image at a time and written
// once for both devices.

// forwardGemm computes output = weights * im2col(input), per group, with
// col as the column buffer. With skipIm2col col already holds
// im2col(input).
func forwardGemm[T layer.Float, A any](l *convBase[T], d device.View[T, A], input, weights, output, col A, skipIm2col bool) {
	colBuff := input
	if !l.is1x1 {
		if !skipIm2col {
			d.Im2col(input, &l.geo, col)
		}
		colBuff = col
	}
	for g := range l.group {
		d.Gemm(blas.NoTrans, blas.NoTrans, l.convOutChannels/l.group, l.convOutSpatial, l.kernelDim,
			1, d.Offset(weights, l.weightOffset*g), d.Offset(colBuff, l.colOffset*g),
			0, d.Offset(output, l.outputOffset*g))
	}
}

// forwardBias adds the bias to every position of one image's output.
func forwardBias[T layer.Float, A any](l *convBase[T], d device.View[T, A], output, bias A) {
	d.Gemm(blas.NoTrans, blas.NoTrans, l.numOutput, l.outSpatial, 1, 1, bias, d.Data(l.biasMultiplier), 1, output)
}

// backwardGemm computes input = col2im(weights^T * output), per group,
// with col as the column buffer.
func backwardGemm[T layer.Float, A any](l *convBase[T], d device.View[T, A], output, weights, input, col A) {
	colBuff := col
	if l.is1x1 {
		colBuff = input
	}
	for g := range l.group {
		d.Gemm(blas.Trans, blas.NoTrans, l.kernelDim, l.convOutSpatial, l.convOutChannels/l.group,
			1, d.Offset(weights, l.weightOffset*g), d.Offset(output, l.outputOffset*g),
			0, d.Offset(colBuff, l.colOffset*g))
	}
	if !l.is1x1 {
		d.Col2im(colBuff, &l.geo, input)
	}
}

// weightGemm accumulates weights += output * im2col(input)^T, per group,
// with col as the column buffer.
func weightGemm[T layer.Float, A any](l *convBase[T], d device.View[T, A], input, output, weights, col A) {
	colBuff := input
	if !l.is1x1 {
		d.Im2col(input, &l.geo, col)
		colBuff = col
	}
	for g := range l.group {
		d.Gemm(blas.NoTrans, blas.Trans, l.convOutChannels/l.group, l.kernelDim, l.convOutSpatial,
			1, d.Offset(output, l.outputOffset*g), d.Offset(colBuff, l.colOffset*g),
			1, d.Offset(weights, l.weightOffset*g))
	}
}

// backwardBias accumulates the bias gradient of one image.
func backwardBias[T layer.Float, A any](l *convBase[T], d device.View[T, A], bias, input A) {
	d.Gemv(blas.NoTrans, l.numOutput, l.outSpatial, 1, input, d.Data(l.biasMultiplier), 1, bias)
}

// Counts: any number of bottoms, each with its top, sharing the weights.
func (*convBase[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(1), Top: layer.AtLeast(1), EqualBottomTop: true}
}

// LayerSetUp reads the parameters and creates or checks the weights.
func (l *convBase[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return l.setUp(bottom[0]) }

// Reshape sizes the tops and buffers.
func (l *convBase[T]) Reshape(bottom, top []*blob.Blob[T]) error { return l.reshape(bottom, top) }

// newConvBase builds the shared part of both layer types.
func newConvBase[T layer.Float](l *convBase[T], p *caffepb.LayerParameter, reverse bool) error {
	if err := l.Init(p); err != nil {
		return err
	}
	l.reverse = reverse
	if p.GetConvolutionParam() == nil {
		return errors.New("convolution_param is missing (num_output and kernel_size are required)")
	}
	return nil
}

// FLOPs returns the floating-point operations of a forward pass (the
// GEMMs: 2 * images * outputs * positions * kernel elements per group) and
// of a backward pass that computes the weight gradient and, with
// propagateDown, the bottom's.
func (l *convBase[T]) FLOPs(propagateDown bool) (forward, backward float64) {
	f := 2 * float64(l.num) * float64(l.convOutChannels) * float64(l.convOutSpatial) * float64(l.kernelDim)
	backward = f
	if propagateDown {
		backward += f
	}
	return f, backward
}

// ConvGeometry returns the geometry of a set-up Convolution, Deconvolution
// or ConvolutionDepthwise.
func (l *convBase[T]) ConvGeometry() layer.ConvGeometry {
	return layer.ConvGeometry{
		Axis:   l.channelAxis,
		Kernel: slices.Clone(l.kernel), Stride: slices.Clone(l.stride),
		Pad: slices.Clone(l.pad), Dilation: slices.Clone(l.dilation),
		Group: l.group, NumOutput: l.numOutput, BiasTerm: l.biasTerm,
		Deconvolution: l.reverse,
	}
}
