package vision

import (
	"math/bits"

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
//
// Channels-last (channelsLast, 16 bits, channels in eights) the _cl8
// kernels take 8 channels of a position a thread, with the weights
// reordered taps first into the workspace for the forward and bottom
// gradient passes; the weight gradient's blocks take up to 32 groups of 8
// channels over a part of the positions (tile groups, parts parts).
type depthwiseConv[T layer.Float] struct {
	wayElems[T]
	geom         [13]int32 // kernels/depthwise.cu's DWGeom
	parts        int       // blocks per channel (channels-last: per tile of channels) of the weight gradient
	channelsLast bool      // the _cl8 kernels on channels-last blobs
	tile         int       // channels-last: groups of 8 channels per block of the weight gradient
}

// dwMaxTaps is depthwise.cu's DW_MAX_TAPS, dwClMaxTaps its
// DW_CL_MAX_TAPS, and dwThreads its DW_THREADS.
const (
	dwMaxTaps   = 25
	dwClMaxTaps = 9
	dwThreads   = 256
)

// depthwiseChannelsLast reports whether the _cl8 kernels take l
// channels-last (depthwiseApplies being true): channels in eights, at
// most dwClMaxTaps taps.
func depthwiseChannelsLast[T layer.Float](l *convBase[T]) bool {
	return l.channels%8 == 0 && l.kernel[0]*l.kernel[1] <= dwClMaxTaps
}

// depthwiseApplies reports whether l is a depthwise convolution the
// kernels take: 2-D, a group per channel with one output each, at most
// dwMaxTaps taps.
func depthwiseApplies[T layer.Float](l *convBase[T]) bool {
	return l.numSpatial == 2 && l.group > 1 && l.group == l.channels && l.numOutput == l.channels &&
		l.kernel[0]*l.kernel[1] <= dwMaxTaps
}

// bytes: the row-major kernels need no workspace, the channels-last
// forward and bottom gradient the weights taps first.
func (d *depthwiseConv[T]) bytes(l *convBase[T], fwd, data, filter bool) int {
	if !d.channelsLast || !fwd && !data {
		return 0
	}
	return l.channels * l.kernel[0] * l.kernel[1] * d.elemBytes()
}

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
	if d.channelsLast {
		groups := l.channels / 8
		d.tile = min(32, 1<<bits.Len(uint(groups-1)))
		tiles := (groups + d.tile - 1) / d.tile
		rows := dwThreads / d.tile
		d.parts = max(1, min((1024+tiles-1)/tiles, total/(16*rows)))
		return nil
	}
	d.parts = max(1, min((1024+l.channels-1)/l.channels, total/(8*dwThreads)))
	return nil
}

// tapsFirst writes the weights w (channels x taps) taps first into ws,
// for the channels-last kernels.
func (d *depthwiseConv[T]) tapsFirst(l *convBase[T], w, ws cuda.DevicePtr) error {
	taps := l.kernel[0] * l.kernel[1]
	n := l.channels * taps
	var a cuda.Args
	a.Int(n).Ptr(w).Int(l.channels).Int(taps).Ptr(ws)
	return launch[T](l.Context(), "depthwise.cu", "dw_taps_first_h16", n, &a)
}

// passCL runs the channels-last forward or bottom gradient kernel name,
// a thread per 8 channels of the n values it writes, from in and the
// weights w into out.
func (d *depthwiseConv[T]) passCL(l *convBase[T], name string, n int, in, w, out, ws cuda.DevicePtr) error {
	if err := d.tapsFirst(l, w, ws); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n / 8).Ptr(in).Ptr(ws).Int32s(d.geom[:]).Ptr(out)
	return launch[T](l.Context(), "depthwise.cu", d.storageKernel(name), n/8, &a)
}

func (d *depthwiseConv[T]) forward(l *convBase[T], g *device.GPUView[T], x, w, y, ws cuda.DevicePtr) error {
	n := l.num * l.topDim
	if d.channelsLast {
		return d.passCL(l, "dw_forward_cl8", n, x, w, y, ws)
	}
	var a cuda.Args
	a.Int(n).Ptr(x).Ptr(w).Int32s(d.geom[:]).Ptr(y)
	return launch[T](l.Context(), "depthwise.cu", d.storageKernel("dw_forward"), n, &a)
}

func (d *depthwiseConv[T]) backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx, ws cuda.DevicePtr) error {
	n := l.num * l.bottomDim
	if d.channelsLast {
		return d.passCL(l, "dw_backward_data_cl8", n, dy, w, dx, ws)
	}
	var a cuda.Args
	a.Int(n).Ptr(dy).Ptr(w).Int32s(d.geom[:]).Ptr(dx)
	return launch[T](l.Context(), "depthwise.cu", d.storageKernel("dw_backward_data"), n, &a)
}

// backwardFilter adds the weight gradient to dw, of T whatever the type
// of x and dy.
func (d *depthwiseConv[T]) backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) error {
	if d.channelsLast {
		return d.backwardFilterCL(l, x, dy, dw)
	}
	f, err := kernel[T](l.Context(), "depthwise.cu", d.storageKernel("dw_backward_filter"))
	if err != nil {
		return err
	}
	var a cuda.Args
	a.Int(l.num).Ptr(x).Ptr(dy).Int32s(d.geom[:]).Int(d.parts).Ptr(dw)
	return f.Launch(cuda.Dim3{X: l.channels, Y: d.parts}, cuda.Dim3{X: dwThreads}, 0, nil, &a)
}

// backwardFilterCL adds the channels-last weight gradient to dw: blocks
// of tile groups of 8 channels by parts of the positions.
func (d *depthwiseConv[T]) backwardFilterCL(l *convBase[T], x, dy, dw cuda.DevicePtr) error {
	f, err := kernel[T](l.Context(), "depthwise.cu", d.storageKernel("dw_backward_filter_cl8"))
	if err != nil {
		return err
	}
	tiles := (l.channels/8 + d.tile - 1) / d.tile
	var a cuda.Args
	a.Int(l.num).Ptr(x).Ptr(dy).Int32s(d.geom[:]).Int(d.tile).Int(d.parts).Ptr(dw)
	return f.Launch(cuda.Dim3{X: tiles, Y: d.parts}, cuda.Dim3{X: dwThreads}, 0, nil, &a)
}
