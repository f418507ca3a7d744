package vision

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Im2col",
		New32: newIm2col[float32], New64: newIm2col[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newIm2colGPU[float32], newIm2colGPU[float64])},
		ONNXWhy: "gocaffe writes no ONNX form of it",
	})
}

// Im2col lays out each image's convolution patches as a convolution would
// see them (Caffe's Im2colLayer), reading convolution_param's kernel,
// stride, pad, dilation and axis: the top has channels * prod(kernel)
// channels and the convolution's output size on each spatial axis.
type im2colLayer[T layer.Float] struct {
	layer.Base[T]
	channelAxis, numSpatial       int
	kernel, stride, pad, dilation []int
	geo                           mathfn.ConvGeometry
	num, bottomDim, topDim        int
	shape                         []int
}

func newIm2col[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &im2colLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if p.GetConvolutionParam() == nil {
		return nil, errors.New("convolution_param is missing (kernel_size is required)")
	}
	return l, nil
}

// Type returns "Im2col".
func (*im2colLayer[T]) Type() string { return "Im2col" }

// Counts returns one bottom and one top.
func (*im2colLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp reads the geometry parameters.
func (l *im2colLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	cp := l.Param().GetConvolutionParam()
	var err error
	if l.channelAxis, err = bottom[0].CanonicalAxisIndex(int(cp.GetAxis())); err != nil {
		return err
	}
	l.numSpatial = bottom[0].NumAxes() - l.channelAxis - 1
	if l.numSpatial < 1 || l.numSpatial > mathfn.MaxSpatialAxes {
		return fmt.Errorf("bottom %s has %d spatial axes after channel axis %d, want 1 to %d", bottom[0].ShapeString(), l.numSpatial, l.channelAxis, mathfn.MaxSpatialAxes)
	}
	l.kernel, l.stride, l.pad, l.dilation, err = convWindow(cp, l.numSpatial)
	return err
}

// Reshape sizes the top.
func (l *im2colLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() != l.channelAxis+1+l.numSpatial {
		return fmt.Errorf("bottom num_axes may not change: %s, set up with %d", b.ShapeString(), l.channelAxis+1+l.numSpatial)
	}
	in := b.Shape()[l.channelAxis+1:]
	out := make([]int, l.numSpatial)
	for i := range out {
		out[i] = mathfn.ConvOutputSize(in[i], l.kernel[i], l.pad[i], l.stride[i], l.dilation[i])
	}
	l.geo = mathfn.ConvGeometry{Channels: b.Shape()[l.channelAxis], In: append([]int(nil), in...), Out: out,
		Kernel: l.kernel, Pad: l.pad, Stride: l.stride, Dilation: l.dilation, ForceND: l.Param().GetConvolutionParam().GetForceNdIm2Col()}
	if err := l.geo.Validate(); err != nil {
		return err
	}
	l.shape = append(append(append(l.shape[:0], b.Shape()[:l.channelAxis]...), l.geo.KernelDim()), out...)
	if err := top[0].Reshape(l.shape); err != nil {
		return err
	}
	l.num, l.bottomDim, l.topDim = b.CountRange(0, l.channelAxis), b.CountFrom(l.channelAxis), top[0].CountFrom(l.channelAxis)
	return nil
}

// ForwardCPU runs im2col on each image on the host.
func (l *im2colLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return im2colForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU runs col2im on each image's gradient on the host.
func (l *im2colLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return im2colBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

func im2colForward[T layer.Float, A any](l *im2colLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	x, y := d.Data(bottom[0]), d.MutableData(top[0])
	for n := range l.num {
		d.Im2col(d.Offset(x, n*l.bottomDim), &l.geo, d.Offset(y, n*l.topDim))
	}
	return d.Err()
}

func im2colBackward[T layer.Float, A any](l *im2colLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dy, dx := d.Diff(top[0]), d.MutableDiff(bottom[0])
	for n := range l.num {
		d.Col2im(d.Offset(dy, n*l.topDim), &l.geo, d.Offset(dx, n*l.bottomDim))
	}
	return d.Err()
}
