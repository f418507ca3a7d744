package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("Deconvolution", newDeconvolution[float32], newDeconvolution[float64]) }

// Deconvolution is the transpose of Convolution (its forward pass is
// convolution's backward pass and vice versa), so it upsamples: each
// spatial output is stride*(in-1) + dilation*(kernel-1)+1 - 2*pad. It takes
// convolution_param; the weights are channels x num_output/group x kernel.
type Deconvolution[T Float] struct{ convBase[T] }

func newDeconvolution[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &Deconvolution[T]{}
	if err := newConvBase(&l.convBase, p, true); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Deconvolution".
func (*Deconvolution[T]) Type() string { return "Deconvolution" }

// ForwardCPU deconvolves on the host.
func (l *Deconvolution[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return deconvForward[T](&l.convBase, device.HostView[T]{}, bottom, top)
}

// BackwardCPU computes the gradients on the host.
func (l *Deconvolution[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return deconvBackward[T](&l.convBase, device.HostView[T]{}, top, propagateDown, bottom)
}

func deconvForward[T Float, A any](l *convBase[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	weights := d.Data(l.blobs[0])
	for i := range bottom {
		in, out := d.Data(bottom[i]), d.MutableData(top[i])
		for n := range l.num {
			output := d.Offset(out, n*l.topDim)
			backwardGemm(l, d, d.Offset(in, n*l.bottomDim), weights, output)
			if l.biasTerm {
				forwardBias(l, d, output, d.Data(l.blobs[1]))
			}
		}
	}
	return d.Err()
}

func deconvBackward[T Float, A any](l *convBase[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
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
				weightGemm(l, d, d.Offset(dy, n*l.topDim), d.Offset(x, n*l.bottomDim), d.MutableDiff(l.blobs[0]))
			}
			if propagateDown[i] {
				// weightGemm just left im2col(dy) in the column buffer.
				forwardGemm(l, d, d.Offset(dy, n*l.topDim), weights, d.Offset(d.MutableDiff(bottom[i]), n*l.bottomDim), l.ParamPropagateDown(0))
			}
		}
	}
	return d.Err()
}
