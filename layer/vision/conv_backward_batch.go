package vision

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// The host's backward pass over a few images at once. Image by image, a
// convolution with few output positions makes products too thin for the
// GEMM: ResNet-50's last 3x3 convolution has 49 positions, so the bottom
// gradient W^T dy is a 4608 x 49 x 512 product per image, which packs the
// whole 9 MB W^T again for each image and fills 4 column panels of 16 for
// 49 columns (18.7 GFLOP/s on one Zen 3 core, against 33.8 for four images
// side by side). Here the top gradients of a few images are laid side by
// side (dyB: numOutput rows of images*positions), their column buffers too
// (mathfn.Im2colLD), and each group takes one product for the weight
// gradient and one for the bottom's, which mathfn.Col2imLD sums back image
// by image. The arithmetic is the image-by-image pass's, with the weight
// gradient's sum over positions and images taken in one product (another
// order of the same sums).

// The forward pass takes the same batches (forwardHostBatched) where the
// images have fewer than convForwardBatchBelow positions: ResNet-50's
// res5 3x3 convolution image by image is a 512 x 49 x 4608 product per
// image, which packs the whole weights again for each and leaves 15 of a
// last panel's 16 columns empty (46.7 GFLOP/s on one core, against 73.6
// for four images side by side). Each output value is the same sum in
// the same order either way (the products' blocks of k do not depend on
// their columns), so the forward pass's results do not change.

// convForwardBatchBelow bounds the positions of the convolutions whose
// forward pass is batched. ResNet-50's res4 (196 positions, 3 images to a
// product) was no faster batched: its products already fill 12 of 13
// panels, and the batch's columns (3.6 MB) fall out of the cache.
const convForwardBatchBelow = 128

// convBatchColumns is the number of columns (images times output
// positions) a batched product aims at: convolutions with at least as many
// positions keep the image-by-image pass.
var convBatchColumns = 512

// convBatchBytes bounds the batched column buffer of one part.
const convBatchBytes = 8 << 20

// backwardBatch returns how many images a part's products cover at once
// in the backward (and forward) pass of parts parts, with the buffers
// sized; 1 for the image-by-image pass.
func (l *convBase[T]) backwardBatch(parts int) int {
	hw := l.convOutSpatial
	if l.reverse || !l.geo.Batchable() || hw >= convBatchColumns {
		return 1
	}
	var zero T
	perImage := l.kernelDim * l.group * hw * int(unsafe.Sizeof(zero))
	nb := min((l.num+parts-1)/parts, (convBatchColumns+hw-1)/hw, max(convBatchBytes/perImage, 1))
	if nb < 2 {
		return 1
	}
	c := &l.cpu
	for len(c.batchCols) < parts {
		c.batchCols = append(c.batchCols, nil)
		c.batchDys = append(c.batchDys, nil)
	}
	for p := range parts {
		c.batchCols[p] = layer.ScratchOf(&l.Base, "conv.batchCols", p, &c.batchCols[p], l.kernelDim*l.group*nb*hw)
		c.batchDys[p] = layer.ScratchOf(&l.Base, "conv.batchDys", p, &c.batchDys[p], l.numOutput*nb*hw)
	}
	return nb
}

// backwardHostBatched is backwardImages for images [lo, hi) of a part, c.batch
// images to a product.
func (l *convBase[T]) backwardHostBatched(part, lo, hi int, wdiff, bdiff []T) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	weights := d.Data(l.Blobs()[0])
	needW := l.ParamPropagateDown(0)
	hw, mg, kd := l.convOutSpatial, l.convOutChannels/l.group, l.kernelDim
	for i := range c.top {
		dy, x, dx, ok := topGradients(l, d, c.top[i], c.bottom[i], c.propagateDown[i], lo, hi, bdiff)
		if !ok {
			continue
		}
		for n0 := lo; n0 < hi; n0 += c.batch {
			images := min(c.batch, hi-n0)
			ld := images * hw
			dyB, col := c.batchDys[part][:l.numOutput*ld], c.batchCols[part][:kd*l.group*ld]
			for j := range images {
				src := dy[(n0+j)*l.topDim:]
				for m := range l.numOutput {
					copy(dyB[m*ld+j*hw:m*ld+(j+1)*hw], src[m*hw:(m+1)*hw])
				}
			}
			if needW && c.useTaps {
				l.weightPanels(part, x, dyB, ld, wdiff, n0, images)
			} else if needW {
				for j := range images {
					mathfn.Im2colLD(x[(n0+j)*l.bottomDim:], &l.geo, col[j*hw:], ld)
				}
				for g := range l.group {
					d.Gemm(blas.NoTrans, blas.Trans, mg, kd, ld,
						1, dyB[g*mg*ld:], col[g*kd*ld:], 1, wdiff[g*l.weightOffset:])
				}
			}
			if c.propagateDown[i] && c.useFlipped {
				l.backwardPanels(part, dy, dx, col, n0, images)
			} else if c.propagateDown[i] {
				// The column buffer is free again: the weight gradient
				// has read it.
				if c.usePackedT {
					mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, ld, dyB, col, nil, true)
				} else {
					for g := range l.group {
						d.Gemm(blas.Trans, blas.NoTrans, kd, ld, mg,
							1, weights[g*l.weightOffset:], dyB[g*mg*ld:], 0, col[g*kd*ld:])
					}
				}
				for j := range images {
					mathfn.Col2imLD(col[j*hw:], ld, &l.geo, dx[(n0+j)*l.bottomDim:])
				}
			}
		}
	}
}

// forwardHostBatched is forwardImages for images [lo, hi) of a part, up
// to c.batch images to a product: their columns side by side
// (mathfn.Im2colLD, which for a 1x1 kernel copies the images), one
// product per group into the part's output buffer, then each image's
// rows copied to its top and its bias added as forwardBias adds it.
// The images are spread evenly over the products (4 images at batch 3:
// 2 and 2, not 3 and 1, whose lone image would be the thin product the
// batching avoids).
func (l *convBase[T]) forwardHostBatched(part, lo, hi int) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	hw, kd := l.convOutSpatial, l.kernelDim
	products := (hi - lo + c.batch - 1) / c.batch
	for i := range c.bottom {
		x, y := d.Data(c.bottom[i]), d.MutableData(c.top[i])
		for n0, left := lo, products; n0 < hi; left-- {
			images := (hi - n0 + left - 1) / left
			ld := images * hw
			yB, col := c.batchDys[part][:l.numOutput*ld], c.batchCols[part][:kd*l.group*ld]
			l.forwardProduct(part, x, yB, col, n0, images)
			for j := range images {
				out := y[(n0+j)*l.topDim:]
				for m := range l.numOutput {
					copy(out[m*hw:(m+1)*hw], yB[m*ld+j*hw:m*ld+(j+1)*hw])
				}
				if l.biasTerm {
					forwardBias(l, d, out, d.Data(l.Blobs()[1]))
				}
			}
			n0 += images
		}
	}
}

// forwardProduct computes yB (numOutput rows of images*positions) for
// images [n0, n0+images) of x, col their column buffer where the product
// reads one.
func (l *convBase[T]) forwardProduct(part int, x, yB, col []T, n0, images int) {
	c := &l.cpu
	hw, mg, kd := l.convOutSpatial, l.convOutChannels/l.group, l.kernelDim
	ld := images * hw
	if c.usePanels {
		p := l.panelsOf(part, &l.geo, images)
		for j := range images {
			p.SetImage(j, x[(n0+j)*l.bottomDim:])
		}
		convProduct(c.packed, p, yB)
		return
	}
	for j := range images {
		mathfn.Im2colLD(x[(n0+j)*l.bottomDim:], &l.geo, col[j*hw:], ld)
	}
	if c.usePacked {
		mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, ld, col, yB, nil, true)
		return
	}
	d := serialHost[T]{device.Host[T](l.Context())}
	weights := d.Data(l.Blobs()[0])
	for g := range l.group {
		d.Gemm(blas.NoTrans, blas.NoTrans, mg, ld, kd,
			1, weights[g*l.weightOffset:], col[g*kd*ld:], 0, yB[g*mg*ld:])
	}
}
