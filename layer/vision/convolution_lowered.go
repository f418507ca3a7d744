package vision

import (
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// loweredConv is the cuDNN convolution engine's way through a 2-D
// convolution of few input channels, a net's first layer (CaffeNet's
// conv1: 3 channels, 11x11, stride 4; ResNet-50's and GoogLeNet's 7x7,
// stride 2): a chunk of images is lowered by im2col into one column
// matrix whose rows span the chunk (kernels/conv_lowered.cu), a single
// GEMM multiplies the weights with it, and the product is rearranged into
// the top. The weight gradient is one GEMM whose inner dimension runs
// over the chunk's pixels, added straight to the T (FP32) diff; the bottom
// gradient a GEMM and col2im. cuDNN's legacy NCHW algorithms run such
// layers far below the tensor cores' rate: CaffeNet's conv1 at batch 256
// took 2.9 ms forward and 2.4 ms backward in BFLOAT16 on the H100, 18-23
// TFLOP/s. Unlike Caffe's im2col and GEMM per image (convolutionGPU),
// the GEMMs here are as large as the chunk. Each pass is timed against
// cuDNN's when the shape changes and the faster kept (convolution_ways.go).
//
// Channels-last (channelsLast, 16 bits) the column matrix is transposed:
// a row of kp entries per output pixel, its taps in the channels-last
// weights' order (conv_lowered.cu's _cl kernels), so that the GEMMs read
// and write y and dy where they are, with no wide product between. cuDNN's
// NHWC algorithms were slower still on these shapes than its NCHW ones:
// CaffeNet's conv1 at batch 256 in BFLOAT16 took 3.03 ms forward and
// 1.88 ms backward channels-last on the H100, 2.15 and 2.35 row-major.
type loweredConv[T layer.Float] struct {
	wayElems[T]
	geom         [13]int32 // kernels/conv_lowered.cu's LowGeom
	rows         int       // the column matrix's rows: channels * kh * kw
	kp           int       // rows rounded up to 8: the padded weights' row length
	ohw          int       // output pixels of an image
	chunk        int       // images per chunk
	channelsLast bool      // the _cl kernels on channels-last blobs
}

// loweredMaxChannels is the most input channels the lowered way takes:
// past a first layer's few, cuDNN's algorithms serve well, and the column
// matrix grows with the channels.
const loweredMaxChannels = 16

// loweredBudget bounds the workspace of a chunk: its column matrix and
// wide product.
var loweredBudget = 128 << 20

// loweredApplies reports whether the lowered way takes l: 2-D, one
// group, few channels, and not a 1x1 kernel that the pointwise way takes.
func loweredApplies[T layer.Float](l *convBase[T]) bool {
	return l.numSpatial == 2 && l.group == 1 && l.channels <= loweredMaxChannels && !pointwiseApplies(l)
}

// reshape takes the geometry and sizes the chunk within limit bytes, a
// multiple of 8 images where it can be: the rows of its matrices, images
// times pixels long, then keep the 16-byte alignment cuBLAS's tensor-core
// kernels want.
func (p *loweredConv[T]) reshape(l *convBase[T], x *blob.Blob[T], limit int) error {
	s := x.Shape()
	h, w := s[l.channelAxis+1], s[l.channelAxis+2]
	oh, ow := l.outShape[0], l.outShape[1]
	p.geom = [13]int32{int32(l.channels), int32(h), int32(w), int32(l.kernel[0]), int32(l.kernel[1]),
		int32(l.pad[0]), int32(l.pad[1]), int32(l.stride[0]), int32(l.stride[1]),
		int32(l.dilation[0]), int32(l.dilation[1]), int32(oh), int32(ow)}
	p.rows = l.channels * l.kernel[0] * l.kernel[1]
	p.kp = (p.rows + 7) &^ 7
	p.ohw = oh * ow
	perImage := (p.rows + l.numOutput) * p.ohw * p.elemBytes()
	if p.channelsLast {
		perImage = p.kp * p.ohw * p.elemBytes()
	}
	p.chunk = max(1, min(l.num, min(limit, loweredBudget)/perImage))
	if p.chunk >= 8 {
		p.chunk -= p.chunk % 8
	}
	return nil
}

// The workspace holds, each part aligned for cuBLAS: the column matrix
// of a chunk, its wide product (or top gradient; none channels-last), the
// weights with rows padded to kp, and the weight gradient in T with rows
// of kp.
func (p *loweredConv[T]) colBytes() int {
	if p.channelsLast {
		return align256(p.kp * p.chunk * p.ohw * p.elemBytes())
	}
	return align256(p.rows * p.chunk * p.ohw * p.elemBytes())
}
func (p *loweredConv[T]) wideBytes(l *convBase[T]) int {
	if p.channelsLast {
		return 0
	}
	return align256(l.numOutput * p.chunk * p.ohw * p.elemBytes())
}
func (p *loweredConv[T]) padBytes(l *convBase[T]) int {
	return align256(l.numOutput * p.kp * p.elemBytes())
}
func (p *loweredConv[T]) partBytes(l *convBase[T]) int {
	var zero T
	return l.numOutput * p.kp * int(unsafe.Sizeof(zero))
}

// align256 rounds n up to a multiple of 256.
func align256(n int) int { return (n + 255) &^ 255 }

// lowered are the parts of the workspace ws.
type lowered struct{ col, wide, wp, part cuda.DevicePtr }

func (p *loweredConv[T]) parts(l *convBase[T], ws cuda.DevicePtr) lowered {
	col := ws
	wide := col + cuda.DevicePtr(p.colBytes())
	wp := wide + cuda.DevicePtr(p.wideBytes(l))
	return lowered{col, wide, wp, wp + cuda.DevicePtr(p.padBytes(l))}
}

// bytes is the workspace of any pass.
func (p *loweredConv[T]) bytes(l *convBase[T], fwd, data, filter bool) int {
	if !fwd && !data && !filter {
		return 0
	}
	return p.colBytes() + p.wideBytes(l) + p.padBytes(l) + p.partBytes(l)
}

// padWeights copies w into wp with rows of kp: a leading dimension of
// rows (363 for CaffeNet's conv1) would keep cuBLAS off its tensor-core
// kernels, which want 16-byte aligned rows.
func (p *loweredConv[T]) padWeights(l *convBase[T], w, wp cuda.DevicePtr) error {
	n := l.numOutput * p.kp
	var a cuda.Args
	a.Int(n).Ptr(w).Int(p.rows).Int(p.kp).Ptr(wp)
	return launch[T](l.Context(), "conv_lowered.cu", p.copyKernel("low_pad_rows"), n, &a)
}

// copyKernel names a kernel that moves x's elements as they are stored.
func (p *loweredConv[T]) copyKernel(name string) string {
	if p.half != 0 {
		return name + "_h16"
	}
	return name
}

// im2col lowers images n0 to n0+nb of x into col.
func (p *loweredConv[T]) im2col(l *convBase[T], x cuda.DevicePtr, n0, nb int, col cuda.DevicePtr) error {
	n := l.channels * nb * p.ohw
	var a cuda.Args
	a.Int(n).Ptr(p.at(x, n0*l.bottomDim)).Int(l.bottomDim).Int(nb).Int32s(p.geom[:]).Ptr(col)
	return launch[T](l.Context(), "conv_lowered.cu", p.copyKernel("low_im2col"), n, &a)
}

// toWide copies the top gradients of images n0 to n0+nb into wide.
func (p *loweredConv[T]) toWide(l *convBase[T], dy cuda.DevicePtr, n0, nb int, wide cuda.DevicePtr) error {
	n := l.numOutput * nb * p.ohw
	var a cuda.Args
	a.Int(n).Ptr(p.at(dy, n0*l.topDim)).Int(nb).Int(l.numOutput).Int(p.ohw).Int(l.topDim).Ptr(wide)
	return launch[T](l.Context(), "conv_batch.cu", p.copyKernel("conv_to_wide"), n, &a)
}

// chunks is the number of chunks of the batch, and chunk the first
// image, images and columns of chunk c.
func (p *loweredConv[T]) chunks(l *convBase[T]) int { return (l.num + p.chunk - 1) / p.chunk }
func (p *loweredConv[T]) chunkAt(l *convBase[T], c int) (n0, nb, cols int) {
	n0 = c * p.chunk
	nb = min(p.chunk, l.num-n0)
	return n0, nb, nb * p.ohw
}

// withPadded returns the workspace's parts with w copied into them with
// padded rows.
func (p *loweredConv[T]) withPadded(l *convBase[T], w, ws cuda.DevicePtr) (lowered, error) {
	b := p.parts(l, ws)
	return b, p.padWeights(l, w, b.wp)
}

func (p *loweredConv[T]) forward(l *convBase[T], g *device.GPUView[T], x, w, y, ws cuda.DevicePtr) error {
	b, err := p.withPadded(l, w, ws)
	if err != nil {
		return err
	}
	if p.channelsLast {
		return p.forwardCL(l, g, x, y, b)
	}
	col, wide := b.col, b.wide
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		if err := p.im2col(l, x, n0, nb, col); err != nil {
			return err
		}
		p.gemm(g, blas.NoTrans, blas.NoTrans, l.numOutput, cols, p.rows, b.wp, p.kp, 0, col, cols, 0, 0, wide, p.blasType(), cols, 0, 1)
		if err := g.Err(); err != nil {
			return err
		}
		n := l.numOutput * cols
		var a cuda.Args
		a.Int(n).Ptr(wide).Int(nb).Int(l.numOutput).Int(p.ohw).Ptr(0).Ptr(p.at(y, n0*l.topDim)).Int(l.topDim)
		if err := launch[T](l.Context(), "conv_batch.cu", p.copyKernel("conv_from_wide"), n, &a); err != nil {
			return err
		}
	}
	return g.Err()
}

func (p *loweredConv[T]) backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx, ws cuda.DevicePtr) error {
	b, err := p.withPadded(l, w, ws)
	if err != nil {
		return err
	}
	if p.channelsLast {
		return p.backwardDataCL(l, g, dy, dx, b)
	}
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		if err := p.toWide(l, dy, n0, nb, b.wide); err != nil {
			return err
		}
		p.gemm(g, blas.Trans, blas.NoTrans, p.rows, cols, l.numOutput, b.wp, p.kp, 0, b.wide, cols, 0, 0, b.col, p.blasType(), cols, 0, 1)
		if err := g.Err(); err != nil {
			return err
		}
		n := nb * l.bottomDim
		var a cuda.Args
		a.Int(n).Ptr(b.col).Int(nb).Int32s(p.geom[:]).Ptr(p.at(dx, n0*l.bottomDim)).Int(l.bottomDim)
		if err := launch[T](l.Context(), "conv_lowered.cu", p.storageKernel("low_col2im"), n, &a); err != nil {
			return err
		}
	}
	return g.Err()
}

// backwardFilter adds dy col^T summed over the chunks to dw (of T
// whatever the type of x and dy): the GEMMs sum into the workspace's
// gradient with rows of kp, added to dw at the end.
func (p *loweredConv[T]) backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) error {
	b := p.parts(l, ws)
	if p.channelsLast {
		return p.backwardFilterCL(l, g, x, dy, dw, b)
	}
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		if err := p.im2col(l, x, n0, nb, b.col); err != nil {
			return err
		}
		if err := p.toWide(l, dy, n0, nb, b.wide); err != nil {
			return err
		}
		beta := float32(1)
		if n0 == 0 {
			beta = 0
		}
		p.gemm(g, blas.NoTrans, blas.Trans, l.numOutput, p.rows, cols, b.wide, cols, 0, b.col, cols, 0, beta, b.part, cuda.BlasFloat, p.kp, 0, 1)
	}
	if err := g.Err(); err != nil {
		return err
	}
	n := l.numOutput * p.rows
	var a cuda.Args
	a.Int(n).Ptr(b.part).Int(p.rows).Int(p.kp).Ptr(dw)
	return launch[T](l.Context(), "conv_lowered.cu", "low_add_rows", n, &a)
}

// loweredChannelsLast reports whether the channels-last kernels take l
// (loweredApplies being true): low_im2col_cl's table holds a tap's
// column offset in 10 bits and its channel in 4, and fits the 48 KB of
// shared memory a block may take unasked.
func loweredChannelsLast[T layer.Float](l *convBase[T]) bool {
	kp := (l.channels*l.kernel[0]*l.kernel[1] + 7) &^ 7
	return l.channels <= 16 && (l.kernel[1]-1)*l.dilation[1] < 1024 && kp*4 <= 48<<10
}

// im2colCLThreads is low_im2col_cl's block: 8 warps, a row each at a
// time.
const im2colCLThreads = 256

// im2colCL lowers images n0 to n0+nb of the channels-last x into the
// transposed col.
func (p *loweredConv[T]) im2colCL(l *convBase[T], x cuda.DevicePtr, n0, nb int, col cuda.DevicePtr) error {
	f, err := kernel[T](l.Context(), "conv_lowered.cu", "low_im2col_cl_h16")
	if err != nil {
		return err
	}
	rows := nb * p.ohw
	blocks := min((rows+im2colCLThreads/32-1)/(im2colCLThreads/32), 8192)
	var a cuda.Args
	a.Int(rows).Ptr(p.at(x, n0*l.bottomDim)).Int(l.bottomDim).Int32s(p.geom[:]).Int(p.kp).Ptr(col)
	return f.Launch(cuda.Dim3{X: blocks}, cuda.Dim3{X: im2colCLThreads}, 4*p.kp, nil, &a)
}

// forwardCL: per chunk, y's rows (pixels x outputs) = col (pixels x kp)
// times the padded weights transposed.
func (p *loweredConv[T]) forwardCL(l *convBase[T], g *device.GPUView[T], x, y cuda.DevicePtr, b lowered) error {
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		if err := p.im2colCL(l, x, n0, nb, b.col); err != nil {
			return err
		}
		p.gemm(g, blas.NoTrans, blas.Trans, cols, l.numOutput, p.kp, b.col, p.kp, 0, b.wp, p.kp, 0, 0, p.at(y, n0*l.topDim), p.blasType(), l.numOutput, 0, 1)
	}
	return g.Err()
}

// backwardDataCL: per chunk, col = dy's rows times the padded weights,
// gathered into dx by col2im.
func (p *loweredConv[T]) backwardDataCL(l *convBase[T], g *device.GPUView[T], dy, dx cuda.DevicePtr, b lowered) error {
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		p.gemm(g, blas.NoTrans, blas.NoTrans, cols, p.kp, l.numOutput, p.at(dy, n0*l.topDim), l.numOutput, 0, b.wp, p.kp, 0, 0, b.col, p.blasType(), p.kp, 0, 1)
		if err := g.Err(); err != nil {
			return err
		}
		n := nb * l.bottomDim
		var a cuda.Args
		a.Int(n).Ptr(b.col).Int32s(p.geom[:]).Int(p.kp).Ptr(p.at(dx, n0*l.bottomDim)).Int(l.bottomDim)
		if err := launch[T](l.Context(), "conv_lowered.cu", p.storageKernel("low_col2im_cl"), n, &a); err != nil {
			return err
		}
	}
	return g.Err()
}

// backwardFilterCL adds dy^T col summed over the chunks to dw: the GEMMs
// sum into the workspace's gradient (outputs x kp, taps outer), added to
// dw in Caffe's order (channels outer) at the end.
func (p *loweredConv[T]) backwardFilterCL(l *convBase[T], g *device.GPUView[T], x, dy, dw cuda.DevicePtr, b lowered) error {
	for c := range p.chunks(l) {
		n0, nb, cols := p.chunkAt(l, c)
		if err := p.im2colCL(l, x, n0, nb, b.col); err != nil {
			return err
		}
		beta := float32(1)
		if n0 == 0 {
			beta = 0
		}
		p.gemm(g, blas.Trans, blas.NoTrans, l.numOutput, p.kp, cols, p.at(dy, n0*l.topDim), l.numOutput, 0, b.col, p.kp, 0, beta, b.part, cuda.BlasFloat, p.kp, 0, 1)
	}
	if err := g.Err(); err != nil {
		return err
	}
	n := l.numOutput * p.rows
	var a cuda.Args
	a.Int(n).Ptr(b.part).Int(l.channels).Int(l.kernel[0] * l.kernel[1]).Int(p.kp).Ptr(dw)
	return launch[T](l.Context(), "conv_lowered.cu", "low_add_rows_cl", n, &a)
}
