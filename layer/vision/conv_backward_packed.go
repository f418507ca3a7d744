package vision

import (
	"slices"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// The host's backward pass with the transposed weights packed once. The
// bottom gradient's product, W^T dy, packed W^T again for each of its
// products: for every image (or every few images, batched) of every part,
// some 2% of a ResNet-50 training pass on two cores, in transposing
// gathers. Here the pass packs W^T once, before its parts start (as the
// forward pass packs W), and every product reads the panels
// (mathfn.GemmPackedEpilogue): the same panels, so the same products.
// Not for pieces of an image (conv_chunks.go), whose products read dy
// through a leading dimension of their own.

// convPackBackward turns the packing off for tests (SetConvPackBackward).
var convPackBackward = true

// packTransposed packs the weights transposed into c.packed for the
// backward pass in progress where its products can read them (usePackedT):
// the default GEMM choice, one group, no deconvolution, whole images, and
// a bottom gradient wanted.
func (l *convBase[T]) packTransposed() {
	c := &l.cpu
	c.usePackedT = convPackBackward && !l.reverse && l.group == 1 && c.chunk == 0 && device.Host[T](l.Context()).GEMM() == settings.GEMMAuto &&
		slices.Contains(c.propagateDown, true)
	c.useFlipped = c.usePackedT && l.panelsBackward()
	if c.useFlipped {
		l.packFlipped()
		return
	}
	if !c.usePackedT {
		return
	}
	blocks := layer.ScratchOf(&l.Base, "conv.packed", 0, &c.packedBlocks, mathfn.PackedASize[T](l.kernelDim, l.numOutput))
	c.packed = mathfn.PackAIn(c.packed, blas.Trans, l.kernelDim, l.numOutput, l.Blobs()[0].CPUData(), blocks)
}

// backwardPacked is backwardImages for images [lo, hi) of a part with the
// transposed weights packed (c.packed), col its column buffer; or with the
// flipped ones (useFlipped), its bottom gradient by GemmConv; its weight
// gradient by GemmConvTaps where useTaps (with or without the packed
// weights).
func (l *convBase[T]) backwardPacked(part, lo, hi int, col, wdiff, bdiff []T) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	needW := l.ParamPropagateDown(0)
	for i := range c.top {
		dy, x, dx, ok := topGradients(l, d, c.top[i], c.bottom[i], c.propagateDown[i], lo, hi, bdiff)
		if !ok {
			continue
		}
		for n := lo; n < hi; n++ {
			dyn := dy[n*l.topDim:]
			if needW && c.useTaps {
				l.weightPanels(part, x, dyn, l.convOutSpatial, wdiff, n, 1)
			} else if needW {
				weightGemm(l, d, x[n*l.bottomDim:], dyn, wdiff, col)
			}
			if !c.propagateDown[i] {
				continue
			}
			if !c.usePackedT {
				backwardGemm(l, d, dyn, d.Data(l.Blobs()[0]), dx[n*l.bottomDim:], col)
				continue
			}
			if c.useFlipped {
				l.backwardPanels(part, dy, dx, nil, n, 1)
				continue
			}
			dxn := dx[n*l.bottomDim:]
			if l.is1x1 {
				mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, l.convOutSpatial, dyn, dxn, nil, true)
				continue
			}
			mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, l.convOutSpatial, dyn, col, nil, true)
			d.Col2im(col, &l.geo, dxn)
		}
	}
}
