package layer

import (
	"fmt"
	"os"
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// pointwiseConv is the cuDNN convolution engine's other way through a 1x1
// convolution of stride 1 and no padding. Per group such a convolution is
// the product of the weights (Kg x Cg) with each image's Cg x HW matrix,
// which one strided-batched cuBLAS GEMM computes for the whole batch with
// no im2col and no rearranging. cuDNN's legacy algorithms are slow on
// these shapes on the H100: on ResNet-50's 256 -> 64 channels at 56x56,
// batch 64, cuDNN's best takes 0.30 ms forward, 0.54 ms for the bottom
// gradient and 0.69 ms for the weight gradient; the GEMMs 0.17, 0.19 and
// 0.20. Elsewhere (few pixels, many groups) cuDNN may win, so each pass is
// timed both ways when the shape changes and the faster kept.
//
// GOCAFFE_CONV_1X1=gemm or =cudnn skips the timing and takes that way for
// every pass (for comparisons and tests).
type pointwiseConv[T Float] struct {
	fwd, bwdData, bwdFilter bool // the GEMM for the pass; otherwise cuDNN

	chunk int           // images per batch of partial weight gradients
	ones  *blob.Blob[T] // chunk ones, which sum the partial gradients
}

// pointwiseBudget bounds the bytes of partial weight gradients.
var pointwiseBudget = 64 << 20

// pointwiseMode reads GOCAFFE_CONV_1X1: "gemm", "cudnn" or "" (time both).
func pointwiseMode() (string, error) {
	switch m := os.Getenv("GOCAFFE_CONV_1X1"); m {
	case "", "auto":
		return "", nil
	case "gemm", "cudnn":
		return m, nil
	default:
		return "", fmt.Errorf("GOCAFFE_CONV_1X1=%q: want gemm, cudnn or auto", m)
	}
}

// workspace is the bytes the weight gradient's partial products need.
func (p *pointwiseConv[T]) workspace(l *convBase[T]) int {
	if !p.bwdFilter {
		return 0
	}
	var zero T
	return p.chunk * l.weightOffset * int(unsafe.Sizeof(zero))
}

// reshape sizes the partial weight gradients within limit bytes.
func (p *pointwiseConv[T]) reshape(l *convBase[T], limit int) error {
	var zero T
	perImage := l.weightOffset * int(unsafe.Sizeof(zero))
	// A bounded buffer: a few GEMV calls more cost less than a workspace
	// of hundreds of MB for the wide layers.
	p.chunk = max(1, min(l.num, min(limit, pointwiseBudget)/perImage))
	return l.ensureOnes(&p.ones, p.chunk)
}

// forward computes y = W x image by image, group by group.
func (p *pointwiseConv[T]) forward(l *convBase[T], g *device.GPUView[T], x, w, y cuda.DevicePtr) {
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	for grp := range l.group {
		g.GemmStrided(blas.NoTrans, blas.NoTrans, kg, hw, cg,
			1, g.Offset(w, grp*l.weightOffset), cg, 0,
			g.Offset(x, grp*cg*hw), hw, l.bottomDim,
			0, g.Offset(y, grp*kg*hw), hw, l.topDim, l.num)
	}
}

// backwardData computes dx = W^T dy image by image, group by group.
func (p *pointwiseConv[T]) backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx cuda.DevicePtr) {
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	for grp := range l.group {
		g.GemmStrided(blas.Trans, blas.NoTrans, cg, hw, kg,
			1, g.Offset(w, grp*l.weightOffset), cg, 0,
			g.Offset(dy, grp*kg*hw), hw, l.topDim,
			0, g.Offset(dx, grp*cg*hw), hw, l.bottomDim, l.num)
	}
}

// backwardFilter adds dy x^T summed over the images to dw: the products
// of a chunk of images land side by side in ws, and one GEMV with ones
// adds them to dw, in place of a reduction over images that no single
// GEMM can express in this layout.
func (p *pointwiseConv[T]) backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) {
	cg, kg, hw := l.channels/l.group, l.numOutput/l.group, l.convOutSpatial
	ones := g.Data(p.ones)
	for grp := range l.group {
		for n0 := 0; n0 < l.num; n0 += p.chunk {
			nb := min(p.chunk, l.num-n0)
			g.GemmStrided(blas.NoTrans, blas.Trans, kg, cg, hw,
				1, g.Offset(dy, n0*l.topDim+grp*kg*hw), hw, l.topDim,
				g.Offset(x, n0*l.bottomDim+grp*cg*hw), hw, l.bottomDim,
				0, ws, cg, l.weightOffset, nb)
			g.Gemv(blas.Trans, nb, l.weightOffset, 1, ws, ones, 1, g.Offset(dw, grp*l.weightOffset))
		}
	}
}

// choose sets, for each pass, whether the GEMM beats cuDNN's algorithm:
// both run on the layer's own bottom and top (as cuDNN's Find does) and
// write the gradients to scratch, which holds a bottom or the weights.
func (p *pointwiseConv[T]) choose(e *convolutionDNN[T], x, y *blob.Blob[T], limit int) error {
	l := e.l
	mode, err := pointwiseMode()
	if err != nil {
		return err
	}
	if err := p.reshape(&l.convBase, limit); err != nil {
		return err
	}
	p.fwd, p.bwdData, p.bwdFilter = mode == "gemm", mode == "gemm", mode == "gemm"
	if mode != "" {
		return nil
	}
	ws, err := l.ctx.Workspace(max(limit, e.fwd.Workspace, e.bwdData.Workspace, e.bwdFilter.Workspace))
	if err != nil {
		return err
	}
	var zero T
	dev := l.ctx.Device()
	scratch, err := dev.Alloc(max(x.Count(), l.blobs[0].Count()) * int(unsafe.Sizeof(zero)))
	if err != nil {
		return err
	}
	defer func() {
		l.ctx.Synchronize()
		dev.Free(scratch)
	}()
	g := l.gpu()
	xp, wp, yp := g.Data(x), g.Data(l.blobs[0]), g.MutableData(y)
	passes := []struct {
		use         *bool
		cudnn, gemm func() error
	}{
		{&p.fwd,
			func() error { return e.dnn.ConvForward(1, e.x.d, xp, e.w, wp, e.conv, e.fwd, ws, 0, e.y.d, yp) },
			func() error { p.forward(&l.convBase, g, xp, wp, yp); return g.Err() }},
		{&p.bwdData,
			func() error {
				return e.dnn.ConvBackwardData(1, e.w, wp, e.y.d, yp, e.conv, e.bwdData, ws, 0, e.x.d, scratch)
			},
			func() error { p.backwardData(&l.convBase, g, wp, yp, scratch); return g.Err() }},
		{&p.bwdFilter,
			func() error {
				return e.dnn.ConvBackwardFilter(1, e.x.d, xp, e.y.d, yp, e.conv, e.bwdFilter, ws, 1, e.w, scratch)
			},
			func() error { p.backwardFilter(&l.convBase, g, xp, yp, scratch, ws); return g.Err() }},
	}
	for _, pass := range passes {
		tc, err := timeOnDevice(l.ctx, pass.cudnn)
		if err != nil {
			return err
		}
		tg, err := timeOnDevice(l.ctx, pass.gemm)
		if err != nil {
			return err
		}
		*pass.use = tg < tc
	}
	return nil
}

// timeOnDevice returns the device time of f, run once to warm up and then
// three times between events on the context's stream.
func timeOnDevice(ctx *device.Context, f func() error) (float32, error) {
	if err := f(); err != nil {
		return 0, err
	}
	dev := ctx.Device()
	start, err := dev.NewEvent()
	if err != nil {
		return 0, err
	}
	defer start.Close()
	end, err := dev.NewEvent()
	if err != nil {
		return 0, err
	}
	defer end.Close()
	if err := start.Record(dev.Stream()); err != nil {
		return 0, err
	}
	for range 3 {
		if err := f(); err != nil {
			return 0, err
		}
	}
	if err := end.Record(dev.Stream()); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.ElapsedMillis(start, end)
}
