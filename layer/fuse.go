package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Fuse lets layer a compute layer b, the next in its net, as part of its
// own passes where a's engine can, and reports whether it will. A net
// calls it for each pair of consecutive layers once they are set up.
//
// Four pairs are fused today:
//   - BatchNorm, then a Scale in place on its top (the Caffe ResNet and
//     MobileNet pattern). The normalization applies the per-channel scale
//     and bias in the same pass and returns their gradients from its
//     backward pass, so Scale's own passes over the activations (about a
//     sixth of a ResNet-50 iteration) go. cuDNN and the own kernels both
//     do this.
//   - BatchNorm, or a Scale fused into one, then a ReLU with a slope of at
//     least zero in place on the same blob, BatchNorm being in place too
//     (the whole chain then has one blob, whose data and diff are the same
//     whether or not the chain is fused). The own kernels apply the ReLU
//     to their output and mask the gradient by recomputing the ReLU's
//     input from x, which they read anyway: the ReLU's two passes go.
//   - Eltwise SUM of two bottoms on the GPU engine, then a ReLU in place
//     on its top (ResNet's residual additions): one pass forward instead
//     of two, one backward instead of two (fuseEltwiseReLU).
//   - Convolution with a bias on the cuDNN engine, then a ReLU in place on
//     its top (CaffeNet, GoogLeNet): the forward pass only, with the bias
//     (fuseConvolutionReLU). This one needs no backward pass.
//
// A fusion holds only while the engine computes the pass the way it needs
// (BatchNorm.fusedScale, fusedReLU): each pass checks, and otherwise the
// layers run as written. needBackward says whether the net runs a's
// backward pass, which must then compute b's; a pair whose first layer
// has no backward pass is not fused, but for the convolution's, which
// fuses the forward pass alone.
func Fuse[T Float](a, b Layer[T], aTop, bBottom, bTop []*blob.Blob[T], needBackward bool) bool {
	if len(bBottom) != 1 || len(bTop) != 1 || len(aTop) != 1 || bBottom[0] != aTop[0] || bTop[0] != bBottom[0] {
		return false
	}
	if c, ok := a.(*Convolution[T]); ok {
		r, ok := b.(*ReLU[T])
		return ok && fuseConvolutionReLU(c, r)
	}
	if !needBackward {
		return false
	}
	switch b := b.(type) {
	case *Scale[T]:
		bn, ok := a.(*BatchNorm[T])
		if !ok {
			return false
		}
		e, ok := bn.engine.(*batchNormDNN[T])
		if !ok {
			return false
		}
		e.scale, b.fusedInto = b, bn
		b.fusedBy = func() bool { return e.fusedScale() == b }
		return true
	case *ReLU[T]:
		var bn *BatchNorm[T]
		switch a := a.(type) {
		case *BatchNorm[T]:
			bn = a
		case *Scale[T]:
			bn = a.fusedInto
		case *Eltwise[T]:
			return fuseEltwiseReLU(a, b)
		}
		if bn == nil || b.slope < 0 {
			return false
		}
		e, ok := bn.engine.(*batchNormDNN[T])
		if !ok || e.own == nil || !e.inPlace { // inPlace: set by the set-up's Reshaped
			return false
		}
		if s, _ := a.(*Scale[T]); e.scale != nil && s != e.scale {
			return false
		}
		e.relu = b
		b.fusedBy = func() bool { return e.fusedReLU() == b }
		return true
	}
	return false
}

// fuseConvolutionReLU lets convolution a, with a bias, on the cuDNN engine,
// apply ReLU b's forward pass in its bias addition. b's backward pass runs
// as written: it reads its output, as in Caffe. This needs no backward
// pass of a, so test nets fuse too.
func fuseConvolutionReLU[T Float](a *Convolution[T], b *ReLU[T]) bool {
	e, ok := a.engine.(*convolutionDNN[T])
	if !ok || !a.biasTerm {
		return false
	}
	e.relu = b
	b.forwardFusedBy = e.fusesReLU
	return true
}

// fuseEltwiseReLU lets Eltwise a, a SUM of two bottoms on the GPU engine,
// apply ReLU b in place on its top (ResNet's residual additions). The
// ReLU's gradient is taken from y, the ReLU's bottom in place as in Caffe,
// so any slope is fused.
func fuseEltwiseReLU[T Float](a *Eltwise[T], b *ReLU[T]) bool {
	if _, ok := a.engine.(eltwiseGPU[T]); !ok || a.op != caffepb.EltwiseParameter_SUM || len(a.coeffs) != 2 {
		return false
	}
	a.relu = b
	b.fusedBy = a.fusesReLU
	return true
}
