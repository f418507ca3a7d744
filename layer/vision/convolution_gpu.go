package vision

import (
	"github.com/gocaffe/gocaffe/layer"
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// convolutionGPU is Convolution's GPU half: chunks of images through one
// batched im2col and one GEMM per group (2-D geometries), or image by image
// through the arithmetic the CPU half shares (convbase.go).
type convolutionGPU[T layer.Float] struct {
	l     *convolutionLayer[T]
	batch convBatch[T]
}

func newConvolutionGPU[T layer.Float](l *convolutionLayer[T]) layer.Engine[T] {
	return &convolutionGPU[T]{l: l}
}

// convBatch holds the buffers of the batched GPU convolution, which handles
// chunks of images with one GEMM per group instead of one small GEMM per
// image.
type convBatch[T layer.Float] struct {
	chunk int           // images per chunk; 0: the per-image path is used
	col   *blob.Blob[T] // im2col of a chunk, columns image by image
	wide  *blob.Blob[T] // a chunk's outputs or output diffs as [m][nb][hw]
	ones  *blob.Blob[T] // nb*hw ones, for the bias gradient
}

// Reshaped sizes the batched convolution's buffers, within the context's
// workspace bound, after the layer's Reshape; their memory is only
// allocated when a pass first touches them. N-D geometries use the
// per-image path.
func (e *convolutionGPU[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	return e.l.reshapeBatch(&e.batch)
}

// reshapeBatch sizes the buffers of cb for the layer's shapes.
func (l *convBase[T]) reshapeBatch(cb *convBatch[T]) error {
	cb.chunk = 0
	if !l.geo.Batchable() {
		return nil
	}
	perImage := max(l.kernelDim*l.group, l.convOutChannels) * l.convOutSpatial
	cb.chunk = max(1, min(l.num, l.Context().ConvWorkspaceElems()/perImage))
	for _, b := range []**blob.Blob[T]{&cb.col, &cb.wide} {
		if *b == nil {
			nb, err := l.NewBlob()
			if err != nil {
				return err
			}
			*b = nb
		}
	}
	cols := cb.chunk * l.convOutSpatial
	if err := cb.col.Reshape([]int{l.kernelDim * l.group, cols}); err != nil {
		return err
	}
	if err := cb.wide.Reshape([]int{l.convOutChannels, cols}); err != nil {
		return err
	}
	if l.biasTerm {
		return kit.Ones(l, &cb.ones, cols)
	}
	return nil
}

// Forward convolves on the device.
func (e *convolutionGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if e.batch.chunk > 0 {
		return l.forwardBatched(l.GPU(), &e.batch, bottom, top)
	}
	return convForward[T](&l.convBase, l.GPU(), bottom, top)
}

// Backward computes the gradients on the device.
func (e *convolutionGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if e.batch.chunk > 0 {
		return l.backwardBatched(l.GPU(), &e.batch, top, propagateDown, bottom)
	}
	return convBackward[T](&l.convBase, l.GPU(), top, propagateDown, bottom)
}

// convScratch is the device memory of a batched pass over chunks of
// images: the im2col of a chunk (col), its outputs or output diffs as
// [m][nb][hw] (wide), and chunk*hw ones for the bias gradient (ones, when
// the layer has a bias).
type convScratch struct {
	chunk           int
	col, wide, ones cuda.DevicePtr
}

// scratch returns cb's buffers, allocating them on first use.
func (cb *convBatch[T]) scratch(g *device.GPUView[T]) convScratch {
	s := convScratch{chunk: cb.chunk, col: g.MutableData(cb.col), wide: g.MutableData(cb.wide)}
	if cb.ones != nil {
		s.ones = g.Data(cb.ones)
	}
	return s
}

// forwardBatched: per chunk of nb images, col = im2col of all of them
// (columns image by image), wide_g = W_g * col_g for each group, and the
// tops get wide, rearranged to [nb][m][hw], plus the bias.
func (l *convBase[T]) forwardBatched(g *device.GPUView[T], cb *convBatch[T], bottom, top []*blob.Blob[T]) error {
	var bias cuda.DevicePtr
	if l.biasTerm {
		bias = g.Data(l.Blobs()[1])
	}
	s := cb.scratch(g)
	for i := range bottom {
		if err := l.forwardChunks(g, s, g.Data(bottom[i]), bias, g.MutableData(top[i])); err != nil {
			return err
		}
	}
	return g.Err()
}

// forwardChunks convolves the images of x into y through s, adding bias
// unless it is 0.
func (l *convBase[T]) forwardChunks(g *device.GPUView[T], s convScratch, x, bias, y cuda.DevicePtr) error {
	weights := g.Data(l.Blobs()[0])
	mg := l.convOutChannels / l.group
	for n0 := 0; n0 < l.num; n0 += s.chunk {
		nb := min(s.chunk, l.num-n0)
		cols := nb * l.convOutSpatial
		g.Im2colBatch(g.Offset(x, n0*l.bottomDim), l.bottomDim, nb, &l.geo, s.col)
		for grp := range l.group {
			g.Gemm(blas.NoTrans, blas.NoTrans, mg, cols, l.kernelDim,
				1, g.Offset(weights, l.weightOffset*grp), g.Offset(s.col, grp*l.kernelDim*cols),
				0, g.Offset(s.wide, grp*mg*cols))
		}
		if err := l.fromWide(g, s.wide, nb, bias, g.Offset(y, n0*l.topDim)); err != nil {
			return err
		}
	}
	return g.Err()
}

// backwardBatched: per chunk, the top diff rearranged to [m][nb][hw] gives
// the bias gradient (one GEMV), the weight gradient (one GEMM per group
// against the chunk's im2col) and the column gradient (one GEMM per group),
// which one batched col2im sums into the bottom diffs.
func (l *convBase[T]) backwardBatched(g *device.GPUView[T], cb *convBatch[T], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	needW, needB := l.ParamPropagateDown(0), l.biasTerm && l.ParamPropagateDown(1)
	s := cb.scratch(g)
	for i := range top {
		if !needW && !needB && !propagateDown[i] {
			continue
		}
		var dx cuda.DevicePtr
		if propagateDown[i] {
			dx = g.MutableDiff(bottom[i])
		}
		if err := l.backwardChunks(g, s, g.Diff(top[i]), g.Data(bottom[i]), dx, needW, needB); err != nil {
			return err
		}
	}
	return g.Err()
}

// backwardChunks adds the weight gradient (needW) and the bias gradient
// (needB) of top diff dy and bottom x, and writes the bottom diff dx
// unless it is 0, chunk by chunk through s.
func (l *convBase[T]) backwardChunks(g *device.GPUView[T], s convScratch, dy, x, dx cuda.DevicePtr, needW, needB bool) error {
	mg := l.convOutChannels / l.group
	for n0 := 0; n0 < l.num; n0 += s.chunk {
		nb := min(s.chunk, l.num-n0)
		cols := nb * l.convOutSpatial
		if err := l.toWide(g, g.Offset(dy, n0*l.topDim), nb, s.wide); err != nil {
			return err
		}
		if needB {
			g.Gemv(blas.NoTrans, l.numOutput, cols, 1, s.wide, s.ones, 1, g.MutableDiff(l.Blobs()[1]))
		}
		if needW {
			g.Im2colBatch(g.Offset(x, n0*l.bottomDim), l.bottomDim, nb, &l.geo, s.col)
			dw := g.MutableDiff(l.Blobs()[0])
			for grp := range l.group {
				g.Gemm(blas.NoTrans, blas.Trans, mg, l.kernelDim, cols,
					1, g.Offset(s.wide, grp*mg*cols), g.Offset(s.col, grp*l.kernelDim*cols),
					1, g.Offset(dw, l.weightOffset*grp))
			}
		}
		if dx != 0 {
			weights := g.Data(l.Blobs()[0])
			for grp := range l.group {
				g.Gemm(blas.Trans, blas.NoTrans, l.kernelDim, cols, mg,
					1, g.Offset(weights, l.weightOffset*grp), g.Offset(s.wide, grp*mg*cols),
					0, g.Offset(s.col, grp*l.kernelDim*cols))
			}
			g.Col2imBatch(s.col, &l.geo, nb, g.Offset(dx, n0*l.bottomDim), l.bottomDim)
		}
		if err := g.Err(); err != nil {
			return err
		}
	}
	return g.Err()
}

// toWide rearranges nb images of [m][hw] output (diffs), topDim apart, to
// [m][nb][hw].
func (l *convBase[T]) toWide(g *device.GPUView[T], x cuda.DevicePtr, nb int, wide cuda.DevicePtr) error {
	n := l.numOutput * nb * l.convOutSpatial
	var a cuda.Args
	a.Int(n).Ptr(x).Int(nb).Int(l.numOutput).Int(l.convOutSpatial).Int(l.topDim).Ptr(wide)
	return launch[T](l.Context(), "conv_batch.cu", "conv_to_wide", n, &a)
}

// fromWide is toWide's reverse, adding the bias (when not 0) on the way.
func (l *convBase[T]) fromWide(g *device.GPUView[T], wide cuda.DevicePtr, nb int, bias, y cuda.DevicePtr) error {
	if err := g.Err(); err != nil {
		return err
	}
	n := l.numOutput * nb * l.convOutSpatial
	var a cuda.Args
	a.Int(n).Ptr(wide).Int(nb).Int(l.numOutput).Int(l.convOutSpatial).Ptr(bias).Ptr(y).Int(l.topDim)
	return launch[T](l.Context(), "conv_batch.cu", "conv_from_wide", n, &a)
}
