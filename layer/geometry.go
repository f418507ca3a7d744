package layer

import (
	"slices"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// ConvGeometry is a convolution's window as its layer resolved it from
// convolution_param and the bottom's shape (Caffe's several spellings of
// kernel, stride, pad and dilation, ConvolutionDepthwise's implied group):
// what an exporter or a tool needs to express the same convolution
// elsewhere without reading the parameters a second way.
type ConvGeometry struct {
	Axis                          int // the channel axis
	Kernel, Stride, Pad, Dilation []int
	Group                         int
	NumOutput                     int
	BiasTerm                      bool
	Deconvolution                 bool
}

// ConvGeometry returns the geometry of a set-up Convolution, Deconvolution
// or ConvolutionDepthwise.
func (l *convBase[T]) ConvGeometry() ConvGeometry {
	return ConvGeometry{
		Axis:   l.channelAxis,
		Kernel: slices.Clone(l.kernel), Stride: slices.Clone(l.stride),
		Pad: slices.Clone(l.pad), Dilation: slices.Clone(l.dilation),
		Group: l.group, NumOutput: l.numOutput, BiasTerm: l.biasTerm,
		Deconvolution: l.reverse,
	}
}

// PoolGeometry is a Pooling layer's window for its current bottom:
// global_pooling resolved to the plane's size and the output size after
// Caffe's rounding (ceil by default, and the rule that the last window
// starts inside the image or its left padding).
type PoolGeometry struct {
	Method           caffepb.PoolingParameter_PoolMethod
	Global           bool
	KernelH, KernelW int
	StrideH, StrideW int
	PadH, PadW       int
	Height, Width    int // the bottom's plane
	PooledH, PooledW int // the top's plane
}

// PoolGeometry returns the geometry of a set-up Pooling layer.
func (l *Pooling[T]) PoolGeometry() PoolGeometry {
	return PoolGeometry{
		Method: l.method, Global: l.global,
		KernelH: l.kernelH, KernelW: l.kernelW,
		StrideH: l.strideH, StrideW: l.strideW,
		PadH: l.padH, PadW: l.padW,
		Height: l.height, Width: l.width,
		PooledH: l.pooledH, PooledW: l.pooledW,
	}
}

// Axis returns the axis a set-up Concat joins along (axis or the legacy
// concat_dim, made non-negative).
func (l *Concat[T]) Axis() int { return l.axis }

// Axis returns the axis a set-up Slice cuts along (axis or the legacy
// slice_dim, made non-negative).
func (l *Slice[T]) Axis() int { return l.axis }

// Offsets returns, for each axis of the first bottom, where the Crop's
// window starts (0 on the axes it leaves whole), as of its last Reshape.
func (l *Crop[T]) Offsets() []int { return slices.Clone(l.offsets) }
