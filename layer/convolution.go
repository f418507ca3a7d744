package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("Convolution", newConvolution[float32], newConvolution[float64]) }

// Convolution convolves each bottom with num_output learned filters
// (im2col + gemm, as Caffe). kernel_size, pad, stride and dilation are
// given once or per spatial axis (or as the 2-D _h/_w fields); group splits
// channels and outputs into independent groups; axis (default 1) is the
// channel axis and every axis after it is spatial, so 1-D, 2-D and N-D
// convolutions share this layer.
type Convolution[T Float] struct{ convBase[T] }

func newConvolution[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &Convolution[T]{}
	if err := newConvBase(&l.convBase, p, false); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Convolution".
func (*Convolution[T]) Type() string { return "Convolution" }

// ForwardCPU convolves on the host.
func (l *Convolution[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return convForward[T](&l.convBase, device.HostView[T]{}, bottom, top)
}

// BackwardCPU computes the gradients on the host.
func (l *Convolution[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return convBackward[T](&l.convBase, device.HostView[T]{}, top, propagateDown, bottom)
}

func convForward[T Float, A any](l *convBase[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	weights := d.Data(l.blobs[0])
	for i := range bottom {
		in, out := d.Data(bottom[i]), d.MutableData(top[i])
		for n := range l.num {
			output := d.Offset(out, n*l.topDim)
			forwardGemm(l, d, d.Offset(in, n*l.bottomDim), weights, output, false)
			if l.biasTerm {
				forwardBias(l, d, output, d.Data(l.blobs[1]))
			}
		}
	}
	return d.Err()
}

func convBackward[T Float, A any](l *convBase[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	weights := d.Data(l.blobs[0])
	for i := range top {
		dy := d.Diff(top[i])
		if l.biasTerm && l.ParamPropagateDown(1) {
			biasDiff := d.MutableDiff(l.blobs[1])
			for n := range l.num {
				backwardBias(l, d, biasDiff, d.Offset(dy, n*l.topDim))
			}
		}
		if !l.ParamPropagateDown(0) && !propagateDown[i] {
			continue
		}
		x := d.Data(bottom[i])
		for n := range l.num {
			if l.ParamPropagateDown(0) {
				weightGemm(l, d, d.Offset(x, n*l.bottomDim), d.Offset(dy, n*l.topDim), d.MutableDiff(l.blobs[0]))
			}
			if propagateDown[i] {
				backwardGemm(l, d, d.Offset(dy, n*l.topDim), weights, d.Offset(d.MutableDiff(bottom[i]), n*l.bottomDim))
			}
		}
	}
	return d.Err()
}
