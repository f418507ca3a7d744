package vision

import (
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// A folded convolution's Winograd way (mathfn.Winograd, F(4x4, 3x3)):
// for 3x3 filters at stride 1, undilated, at the shapes where it beats
// im2col and the GEMM; in groups, each group's products on its own
// (mathfn.NewWinogradGroups). Only the folded pass takes it (an
// inference plan, layer.Fold): it rounds otherwise than Caffe's
// arithmetic, within the fold's tolerance, and training keeps Caffe's.

// winoFits reports whether the layer's window is one Winograd computes:
// a 2-D convolution over axis 1, 3x3, stride 1, no dilation;
// in float32 (the shape rule was measured there, and float64 has no vector
// transforms: its Go ones took 70% of a layer's time in float32).
func (l *convBase[T]) winoFits() bool {
	var zero T
	return unsafe.Sizeof(zero) == 4 && !l.reverse && l.channelAxis == 1 && l.numSpatial == 2 &&
		l.kernel[0] == 3 && l.kernel[1] == 3 && l.stride[0] == 1 && l.stride[1] == 1 &&
		l.dilation[0] == 1 && l.dilation[1] == 1 && !l.Param().GetConvolutionParam().GetForceNdIm2Col()
}

// winoAlways makes every layer that fits take the Winograd way, whatever
// its shape (the tests' and benchmarks' switch).
var winoAlways = false

// winoWins reports whether, at the shape of the last Reshape and with
// outputs output channels (the layer's, or with its siblings'), the
// Winograd way is faster than im2col and the GEMM: at least 16 output
// blocks in the pass (fewer give the 36 products too few columns, and
// the transformed filters, four times the weights, are read for little),
// at least 32 channels in and out of each group (with fewer the
// transforms cost more than the products save), and with fewer than 64
// an output of at least 14x14 (on 7x7 a quarter of the blocks' outputs
// are cut off).
//
// Measured with BenchmarkConvFolded and BenchmarkConvFoldedCrossover
// (conv_winograd_test.go), GOMAXPROCS=2 on a 2-vCPU AMD EPYC with AVX2
// (shared, load average 2-3), folded pass in ms, im2col -> Winograd,
// batch 1 / batch 10:
//
//	ResNet-50   64->64 56x56      2.64 -> 1.25 / 29.9 -> 14.6
//	           128->128 28x28     1.95 -> 0.95 / 18.7 -> 8.50
//	           256->256 14x14     1.77 -> 1.06 / 17.9 -> 9.48
//	           512->512 7x7       2.14 -> 3.20 / 21.5 -> 7.79 (4 blocks at batch 1)
//	GoogLeNet   64->192 56x56     4.77 -> 3.34 / 69.3 -> 34.2
//	            96->128 28x28     1.24 -> 0.80 / 11.9 -> 7.13
//	           128->192 28x28     2.53 -> 1.35 / 23.9 -> 10.6
//	           112->224 14x14     0.96 -> 0.49 / 5.75 -> 3.78
//	           160->320 7x7       0.55 -> 0.69 / 3.81 -> 2.10
//	            16->32 28x28      0.16 -> 0.19 / 0.96 -> 1.15
//	            32->64 7x7        0.06 -> 0.11 / 0.33 -> 0.45
//	CaffeNet   256->384 13x13     2.27 -> 1.45 / 21.2 -> 11.6
//	           384->384 13x13     5.04 -> 2.11 / 32.3 -> 19.1
//	           384->256 13x13     3.01 -> 1.63 / 24.3 -> 13.7
//
// In two groups, CaffeNet's conv4 and conv5 (2026-11-27 20:47 UTC, on a
// 2-vCPU AMD EPYC of the Zen 4 generation, with AVX-512, load average
// 0.9, two runs each): 384->384 13x13 2.36-3.14 -> 1.82 / 19.0-20.8 ->
// 11.7, 384->256 13x13 1.83-2.34 -> 1.30 / 15.2 -> 8.3. With the
// AVX-512 half-width kernel after (mathfn, for the products' 16 columns
// at batch 1), least of four runs, 21:10 UTC: 1.04 and 0.97 ms.
//
// Near the crossover, batch 1: 32->64 28x28 0.38 -> 0.41 (an earlier run:
// 0.62 -> 0.56), 48->48 28x28 0.47 -> 0.45, 32->32 56x56 0.76 -> 0.66,
// 48->64 14x14 0.22 -> 0.18; 9 blocks (10x10): 128->128 0.35 -> 0.41,
// 256->256 1.04 -> 0.95, 512->512 4.03 -> 3.37; 8 blocks (7x7 at batch
// 2): 256->256 1.00 -> 0.82, 160->320 0.77 -> 0.65, 512->512 4.29 ->
// 3.79. Between 8 and 16 blocks and at 32 channels the two are within
// the machine's noise; im2col keeps the former.
func (l *convBase[T]) winoWins(outputs int) bool {
	if winoAlways {
		return true
	}
	out := l.geo.Out
	least := min(l.channels, outputs) / l.group
	return mathfn.WinogradVector[T]() && least >= 32 && l.winoTiles() >= 16 && (least >= 64 || out[0] >= 14 && out[1] >= 14)
}

// winoTiles is the number of 4x4 output blocks of the pass.
func (l *convBase[T]) winoTiles() int {
	out := l.geo.Out
	return l.num * ((out[0] + 3) / 4) * ((out[1] + 3) / 4)
}

// setWinograd records whether the fold may take the Winograd way, and
// drops the filters transformed from the weights before: the first pass
// that takes the way transforms them again (winograd), so that a layer
// whose shapes never do holds none (they are four times its weights:
// 113 MB for ResNet-50's three 512-channel layers, which at batch 1 keep
// im2col).
func (l *convBase[T]) setWinograd(f *layer.Fold) {
	l.fold.wino = nil
	l.fold.winoOK = !f.NoWinograd && l.winoFits()
}

// winograd returns the transformed filters, made from the layer's weights
// and the fold's scale on first use after SetFold.
func (l *convBase[T]) winograd() (*mathfn.Winograd[T], error) {
	if l.fold.wino == nil {
		w, err := mathfn.NewWinogradGroups(l.numOutput, l.channels, l.group, l.Blobs()[0].CPUData(), l.fold.scale)
		if err != nil {
			return nil, err
		}
		l.fold.wino = w
	}
	return l.fold.wino, nil
}

// forwardWinograd is forwardFolded's Winograd way, every bottom in turn.
func (l *convBase[T]) forwardWinograd(bottom, top []*blob.Blob[T]) error {
	w, err := l.winograd()
	if err != nil {
		return err
	}
	if err := w.Reshape(l.num, l.geo.In[0], l.geo.In[1], l.pad[0], l.pad[1]); err != nil {
		return err
	}
	for i, b := range bottom {
		w.Forward(b.CPUData(), top[i].MutableCPUData(), &l.fold.wep)
	}
	return nil
}
