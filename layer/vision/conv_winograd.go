package vision

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// A folded convolution's Winograd way (mathfn.Winograd, F(4x4, 3x3)):
// for 3x3 filters at stride 1, undilated, in one group, at the shapes
// where it beats im2col and the GEMM. Only the folded pass takes it (an
// inference plan, layer.Fold): it rounds otherwise than Caffe's
// arithmetic, within the fold's tolerance, and training keeps Caffe's.

// winoFits reports whether the layer's window is one Winograd computes:
// a 2-D convolution over axis 1, 3x3, stride 1, no dilation, one group.
func (l *convBase[T]) winoFits() bool {
	return !l.reverse && l.channelAxis == 1 && l.numSpatial == 2 && l.group == 1 &&
		l.kernel[0] == 3 && l.kernel[1] == 3 && l.stride[0] == 1 && l.stride[1] == 1 &&
		l.dilation[0] == 1 && l.dilation[1] == 1 && !l.Param().GetConvolutionParam().GetForceNdIm2Col()
}

// winoAlways makes every layer that fits take the Winograd way, whatever
// its shape (the tests' and benchmarks' switch).
var winoAlways = false

// winoWins reports whether, at the shape of the last Reshape, the
// Winograd way is faster than im2col and the GEMM. Measured with
// BenchmarkConvFolded (conv_winograd_test.go), GOMAXPROCS=2 on a 2-vCPU
// AMD EPYC with AVX2, ms per pass im2col -> Winograd:
//
//	TODO figures
func (l *convBase[T]) winoWins() bool {
	if winoAlways {
		return true
	}
	cin, cout := l.channels, l.numOutput
	return cin >= 16 && cout >= 16 && l.winoTiles() >= 16
}

// winoTiles is the number of 4x4 output blocks of the pass.
func (l *convBase[T]) winoTiles() int {
	out := l.geo.Out
	return l.num * ((out[0] + 3) / 4) * ((out[1] + 3) / 4)
}

// setWinograd transforms the folded weights for the Winograd way, or
// drops it where the layer does not fit or f asks for none.
func (l *convBase[T]) setWinograd(f *layer.Fold) error {
	l.fold.wino = nil
	if f.NoWinograd || !l.winoFits() {
		return nil
	}
	w, err := mathfn.NewWinograd(l.numOutput, l.channels, l.foldedWeights())
	if err != nil {
		return err
	}
	l.fold.wino = w
	return nil
}

// forwardWinograd is forwardFolded's Winograd way, every bottom in turn.
func (l *convBase[T]) forwardWinograd(bottom, top []*blob.Blob[T]) error {
	w := l.fold.wino
	if err := w.Reshape(l.num, l.geo.In[0], l.geo.In[1], l.pad[0], l.pad[1]); err != nil {
		return err
	}
	for i, b := range bottom {
		w.Forward(b.CPUData(), top[i].MutableCPUData(), &l.fold.eps[0])
	}
	return nil
}
