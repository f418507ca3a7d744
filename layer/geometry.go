package layer

import (
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
