package vision

import (
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// pointwiseConv is the cuDNN convolution engine's other way through a
// convolution with a 1x1 kernel and no padding. Per group such a
// convolution is the product of the weights (Kg x Cg) with each image's
// Cg x HW matrix, which one strided-batched cuBLAS GEMM computes for the
// whole batch with no im2col and no rearranging; a stride (2-D) first
// gathers the pixels it reads into the workspace, and the bottom gradient
// is scattered back with zeros between. cuDNN's legacy algorithms are slow
// on these shapes on the H100: on ResNet-50's 256 -> 64 channels at 56x56,
// batch 64, cuDNN's best takes 0.30 ms forward, 0.54 ms for the bottom
// gradient and 0.69 ms for the weight gradient; the GEMMs 0.17, 0.19 and
// 0.20. Elsewhere (few pixels, many groups) cuDNN may win, so each pass is
// timed both ways when the shape changes and the faster kept
// (convolution_ways.go).
//
// In a 16-bit type (half set: the engine's kit.Reduced) x, y, the weights'
// copy and the gradients of x and y are 16-bit, the GEMMs sum in FP32
// (cublasGemmStridedBatchedEx), and the partial weight gradients are FP32,
// summed by the FP32 GEMV into the FP32 diff: no 16-bit weight gradient.
// cuDNN's 16-bit NCHW algorithms are slower still on these shapes (the
// weight and bottom gradients of GoogLeNet's 1x1 layers at 1-7 TFLOP/s).
//
// Channels-last (channelsLast: one group, no stride) the batch's pixels
// are the rows of one matrix, x (pixels x channels) and y (pixels x
// outputs), so that the forward and bottom gradient passes are one GEMM
// each over the whole batch; the weight gradient sums per-image products
// as row-major.
type pointwiseConv[T layer.Float] struct {
	wayElems[T]
	channelsLast bool          // x, y and their gradients channels-last
	strided      bool          // a stride other than 1: gather and scatter
	h, w, sh, sw int           // the bottom's spatial size and the stride (strided)
	ho, wo       int           // the top's spatial size (strided)
	gathered     int           // elements of the gathered bottom (strided)
	chunk        int           // images per batch of partial weight gradients
	ones         *blob.Blob[T] // chunk ones, which sum the partial gradients
}

// pointwiseBudget bounds the bytes of partial weight gradients.
var pointwiseBudget = 64 << 20

// pointwiseChannelsLast reports whether the channels-last GEMMs take l
// (pointwiseApplies being true): one group and no stride.
func pointwiseChannelsLast[T layer.Float](l *convBase[T]) bool {
	for _, s := range l.stride {
		if s != 1 {
			return false
		}
	}
	return l.group == 1
}

// pointwiseApplies reports whether l's convolution is a GEMM per image:
// a 1x1 kernel with no padding, and a stride only on 2-D images.
func pointwiseApplies[T layer.Float](l *convBase[T]) bool {
	strided := false
	for i := range l.numSpatial {
		if l.kernel[i] != 1 || l.pad[i] != 0 {
			return false
		}
		strided = strided || l.stride[i] != 1
	}
	return !strided || l.numSpatial == 2
}

// bytes is the workspace of the passes asked for: the gathered bottom or
// its gradient, and the partial weight gradients (in T) beside the former.
func (p *pointwiseConv[T]) bytes(l *convBase[T], fwd, data, filter bool) int {
	var zero T
	n := 0
	if filter {
		n = p.chunk * l.weightOffset * int(unsafe.Sizeof(zero))
	}
	if p.strided && (fwd || data || filter) {
		n += p.gatheredBytes()
	}
	return n
}

// gatheredBytes is the workspace of the gathered bottom, rounded up so
// that the partial weight gradients after it are aligned for cuBLAS.
func (p *pointwiseConv[T]) gatheredBytes() int {
	return (p.gathered*p.elemBytes() + 255) &^ 255
}

// stridedKernel names conv_batch.cu's gather or scatter for the type.
func (p *pointwiseConv[T]) stridedKernel(name string) string {
	if p.half != 0 {
		return name + "_h16"
	}
	return name
}

// reshape takes the geometry and sizes the partial weight gradients
// within limit bytes.
func (p *pointwiseConv[T]) reshape(l *convBase[T], x *blob.Blob[T], limit int) error {
	p.strided = false
	for _, s := range l.stride {
		p.strided = p.strided || s != 1
	}
	if p.strided {
		s := x.Shape()
		p.h, p.w, p.sh, p.sw = s[2], s[3], l.stride[0], l.stride[1]
		p.ho, p.wo = (p.h-1)/p.sh+1, (p.w-1)/p.sw+1
		p.gathered = l.num * l.channels * p.ho * p.wo
	}
	var zero T
	perImage := l.weightOffset * int(unsafe.Sizeof(zero))
	// A bounded buffer: a few GEMV calls more cost less than a workspace
	// of hundreds of MB for the wide layers.
	p.chunk = max(1, min(l.num, min(limit, pointwiseBudget)/perImage))
	return kit.Ones(l, &p.ones, p.chunk)
}

// gather points at the bottom as the GEMMs read it: x itself, or its
// strided pixels gathered into ws. It returns the pointer and the elements
// from one image to the next.
func (p *pointwiseConv[T]) gather(l *convBase[T], x, ws cuda.DevicePtr) (cuda.DevicePtr, int, error) {
	if !p.strided {
		return x, l.bottomDim, nil
	}
	var a cuda.Args
	a.Int(p.gathered).Ptr(x).Int(p.h).Int(p.w).Int(p.ho).Int(p.wo).Int(p.sh).Int(p.sw).Ptr(ws)
	return ws, l.channels * p.ho * p.wo, launch[T](l.Context(), "conv_batch.cu", p.stridedKernel("conv_subsample"), p.gathered, &a)
}

// forward computes y = W x image by image, group by group.
func (p *pointwiseConv[T]) forward(l *convBase[T], g *device.GPUView[T], x, w, y, ws cuda.DevicePtr) error {
	if p.channelsLast { // y (pixels x outputs) = x (pixels x channels) W^T
		p.gemm(g, blas.NoTrans, blas.Trans, l.num*l.convOutSpatial, l.numOutput, l.channels, x, l.channels, 0, w, l.channels, 0, 0, y, p.blasType(), l.numOutput, 0, 1)
		return g.Err()
	}
	x, xStride, err := p.gather(l, x, ws)
	if err != nil {
		return err
	}
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	for grp := range l.group {
		p.gemm(g, blas.NoTrans, blas.NoTrans, kg, hw, cg,
			p.at(w, grp*l.weightOffset), cg, 0,
			p.at(x, grp*cg*hw), hw, xStride,
			0, p.at(y, grp*kg*hw), p.blasType(), hw, l.topDim, l.num)
	}
	return g.Err()
}

// backwardData computes dx = W^T dy image by image, group by group (into
// ws and then scattered to dx, if strided).
func (p *pointwiseConv[T]) backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx, ws cuda.DevicePtr) error {
	if p.channelsLast { // dx (pixels x channels) = dy (pixels x outputs) W
		p.gemm(g, blas.NoTrans, blas.NoTrans, l.num*l.convOutSpatial, l.channels, l.numOutput, dy, l.numOutput, 0, w, l.channels, 0, 0, dx, p.blasType(), l.channels, 0, 1)
		return g.Err()
	}
	out, outStride := dx, l.bottomDim
	if p.strided {
		out, outStride = ws, l.channels*p.ho*p.wo
	}
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	for grp := range l.group {
		p.gemm(g, blas.Trans, blas.NoTrans, cg, hw, kg,
			p.at(w, grp*l.weightOffset), cg, 0,
			p.at(dy, grp*kg*hw), hw, l.topDim,
			0, p.at(out, grp*cg*hw), p.blasType(), hw, outStride, l.num)
	}
	if !p.strided {
		return g.Err()
	}
	if err := g.Err(); err != nil {
		return err
	}
	n := l.num * l.bottomDim
	var a cuda.Args
	a.Int(n).Ptr(ws).Int(p.h).Int(p.w).Int(p.ho).Int(p.wo).Int(p.sh).Int(p.sw).Ptr(dx)
	return launch[T](l.Context(), "conv_batch.cu", p.stridedKernel("conv_upsample"), n, &a)
}

// backwardFilter adds dy x^T summed over the images to dw (in T): the
// products of a chunk of images land side by side in ws (after the
// gathered bottom, if strided), and one GEMV with ones adds them to dw, in
// place of a reduction over images that no single GEMM can express in this
// layout.
func (p *pointwiseConv[T]) backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) error {
	x, xStride, err := p.gather(l, x, ws)
	if err != nil {
		return err
	}
	partial := ws
	if p.strided {
		partial = ws + cuda.DevicePtr(p.gatheredBytes())
	}
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	ones := g.Data(p.ones)
	if p.channelsLast {
		return p.backwardFilterCL(l, g, x, dy, dw, partial, ones)
	}
	for grp := range l.group {
		for n0 := 0; n0 < l.num; n0 += p.chunk {
			nb := min(p.chunk, l.num-n0)
			p.gemm(g, blas.NoTrans, blas.Trans, kg, cg, hw,
				p.at(dy, n0*l.topDim+grp*kg*hw), hw, l.topDim,
				p.at(x, n0*xStride+grp*cg*hw), hw, xStride,
				0, partial, cuda.BlasFloat, cg, l.weightOffset, nb)
			g.Gemv(blas.Trans, nb, l.weightOffset, 1, partial, ones, 1, g.Offset(dw, grp*l.weightOffset))
		}
	}
	return g.Err()
}

// backwardFilterCL adds dy^T x summed over the images to dw, channels-last:
// each image's product (its pixels the inner dimension) lands in partial,
// a chunk of images side by side, and a GEMV with ones adds them to dw.
func (p *pointwiseConv[T]) backwardFilterCL(l *convBase[T], g *device.GPUView[T], x, dy, dw, partial, ones cuda.DevicePtr) error {
	for n0 := 0; n0 < l.num; n0 += p.chunk {
		nb := min(p.chunk, l.num-n0)
		p.gemm(g, blas.Trans, blas.NoTrans, l.numOutput, l.channels, l.convOutSpatial,
			p.at(dy, n0*l.topDim), l.numOutput, l.topDim,
			p.at(x, n0*l.bottomDim), l.channels, l.bottomDim,
			0, partial, cuda.BlasFloat, l.channels, l.weightOffset, nb)
		g.Gemv(blas.Trans, nb, l.weightOffset, 1, partial, ones, 1, dw)
	}
	return g.Err()
}
