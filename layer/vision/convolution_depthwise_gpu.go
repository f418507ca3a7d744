package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
)

// depthwiseConv is the cuDNN convolution engine's other way through a
// depthwise convolution (a group per channel, one output per channel, 2-D):
// gocaffe's kernels (kernels/depthwise.cu), one thread per output for the
// forward pass and per bottom element for its gradient, and per channel
// and part of the pixels a block summing every tap's weight gradient. The
// layers are memory-bound, and cuDNN's grouped NCHW algorithms read them
// poorly: on MobileNet v1 at batch 64 in BFLOAT16 its conv2-4_dw
// gradients took 1.2-1.7 ms each, 0.3-0.8 TFLOP/s. Each pass is timed
// against cuDNN's when the shape changes and the faster kept
// (convolution_ways.go). The weight gradient adds with atomics where a
// channel is cut into several parts: -deterministic keeps cuDNN's
// deterministic algorithms instead.
type depthwiseConv[T layer.Float] struct {
	wayElems[T]
	geom  [13]int32 // kernels/depthwise.cu's DWGeom
	parts int       // blocks per channel of the weight gradient
}

// dwMaxTaps is depthwise.cu's DW_MAX_TAPS, and dwThreads its DW_THREADS.
const (
	dwMaxTaps = 25
	dwThreads = 256
)

// depthwiseApplies reports whether l is a depthwise convolution the
// kernels take: 2-D, a group per channel with one output each, at most
// dwMaxTaps taps.
func depthwiseApplies[T layer.Float](l *convBase[T]) bool {
	return l.numSpatial == 2 && l.group > 1 && l.group == l.channels && l.numOutput == l.channels &&
		l.kernel[0]*l.kernel[1] <= dwMaxTaps
}

// bytes: the kernels need no workspace.
func (d *depthwiseConv[T]) bytes(l *convBase[T], fwd, data, filter bool) int { return 0 }

// reshape takes the geometry and cuts each channel's weight gradient
// into parts enough to give the device about a thousand blocks.
func (d *depthwiseConv[T]) reshape(l *convBase[T], x *blob.Blob[T], limit int) error {
	s := x.Shape()
	h, w := s[l.channelAxis+1], s[l.channelAxis+2]
	oh, ow := l.outShape[0], l.outShape[1]
	d.geom = [13]int32{int32(l.channels), int32(h), int32(w), int32(oh), int32(ow),
		int32(l.kernel[0]), int32(l.kernel[1]), int32(l.stride[0]), int32(l.stride[1]),
		int32(l.pad[0]), int32(l.pad[1]), int32(l.dilation[0]), int32(l.dilation[1])}
	total := l.num * oh * ow
	d.parts = max(1, min((1024+l.channels-1)/l.channels, total/(8*dwThreads)))
	return nil
}

func (d *depthwiseConv[T]) forward(l *convBase[T], g *device.GPUView[T], x, w, y, ws cuda.DevicePtr) error {
	n := l.num * l.topDim
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(w).Int32s(d.geom[:]).Ptr(y)
	return launch[T](l.Context(), "depthwise.cu", d.storageKernel("dw_forward"), n, &a)
}

func (d *depthwiseConv[T]) backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx, ws cuda.DevicePtr) error {
	n := l.num * l.bottomDim
	var a cuda.Args
	a.Int(n).Ptr(dy).Ptr(w).Int32s(d.geom[:]).Ptr(dx)
	return launch[T](l.Context(), "depthwise.cu", d.storageKernel("dw_backward_data"), n, &a)
}

// backwardFilter adds the weight gradient to dw, of T whatever the type
// of x and dy.
func (d *depthwiseConv[T]) backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) error {
	f, err := kernel[T](l.Context(), "depthwise.cu", d.storageKernel("dw_backward_filter"))
	if err != nil {
		return err
	}
	var a cuda.Args
	a.Int(l.num).Ptr(x).Ptr(dy).Int32s(d.geom[:]).Int(d.parts).Ptr(dw)
	return f.Launch(cuda.Dim3{X: l.channels, Y: d.parts}, cuda.Dim3{X: dwThreads}, 0, nil, &a)
}
