package vision

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/settings"
)

// convWay is a way through a cuDNN Convolution's passes other than cuDNN's
// own algorithms: cuBLAS GEMMs on 1x1 kernels (pointwiseConv) and on the
// lowered images of few channels (loweredConv), or gocaffe's depthwise
// kernels (depthwiseConv), in T or in the engine's 16-bit type, and on
// channels-last blobs too (the pointwise way without groups or strides). ws is the context's workspace, of at least
// bytes for the passes taken this way; the weight gradient is added to
// the FP32 (T) diff in either case.
//
// Caffe's im2col and a GEMM per group, timed the same way against cuDNN,
// won nowhere on the H100: CaffeNet's conv1, where cuDNN's legacy
// algorithms are slowest (2.4 ms forward in TF32 against PyTorch's 1.1),
// kept cuDNN, and CaffeNet and GoogLeNet in FP32 trained 2-5% slower with
// it, the timing at set-up choosing it where it then lost.
type convWay[T layer.Float] interface {
	setType(half cuda.BlasType) // x, y and w in a 16-bit type; 0: in T
	elemBytes() int
	reshape(l *convBase[T], x *blob.Blob[T], limit int) error
	bytes(l *convBase[T], fwd, data, filter bool) int
	forward(l *convBase[T], g *device.GPUView[T], x, w, y, ws cuda.DevicePtr) error
	backwardData(l *convBase[T], g *device.GPUView[T], w, dy, dx, ws cuda.DevicePtr) error
	backwardFilter(l *convBase[T], g *device.GPUView[T], x, dy, dw, ws cuda.DevicePtr) error
}

// wayElems is what the ways share about x, y and w: their type, T or a
// 16-bit one (setType), and the GEMMs and kernels in it.
type wayElems[T layer.Float] struct {
	half cuda.BlasType // the 16-bit type of x, y and w; 0: T
}

// setType makes x, y and w of the passes 16-bit values of type half (0:
// of T).
func (p *wayElems[T]) setType(half cuda.BlasType) { p.half = half }

// elemBytes is the size of an element of x, y and w.
func (p *wayElems[T]) elemBytes() int {
	if p.half != 0 {
		return 2
	}
	var zero T
	return int(unsafe.Sizeof(zero))
}

// blasType is the cuBLAS type of x, y and w.
func (p *wayElems[T]) blasType() cuda.BlasType {
	if p.half != 0 {
		return p.half
	}
	return cuda.BlasFloat
}

// at is ptr advanced by n elements of x, y or w.
func (p *wayElems[T]) at(ptr cuda.DevicePtr, n int) cuda.DevicePtr {
	return ptr + cuda.DevicePtr(n*p.elemBytes())
}

// storageKernel names a kernel of ALL_STORAGES for the type of x, y and
// w (the launch adds T's suffix).
func (p *wayElems[T]) storageKernel(name string) string {
	switch p.half {
	case cuda.BlasBFloat16:
		return name + "_bf16"
	case cuda.BlasHalf:
		return name + "_f16"
	}
	return name
}

// gemm is GemmStrided in T or, in a 16-bit type, with x, y and w in it,
// c (the result) in ct and the sums in FP32; beta scales what c held.
func (p *wayElems[T]) gemm(g *device.GPUView[T], ta, tb blas.Transpose, m, n, k int, a cuda.DevicePtr, lda, sa int, b cuda.DevicePtr, ldb, sb int, beta float32, c cuda.DevicePtr, ct cuda.BlasType, ldc, sc, batch int) {
	if p.half == 0 {
		g.GemmStrided(ta, tb, m, n, k, 1, a, lda, sa, b, ldb, sb, T(beta), c, ldc, sc, batch)
		return
	}
	g.GemmStridedMixed(ta, tb, m, n, k, 1, a, p.half, lda, sa, b, p.half, ldb, sb, beta, c, ct, ldc, sc, batch)
}

// The passes of a convolution, indexing convolutionDNN.use.
const (
	passForward = iota
	passBackwardData
	passBackwardFilter
)

// convWayMode reads the ConvGEMM setting (GOCAFFE_CONV_GEMM) of ctx:
// "gemm" takes the GEMM way for every pass where one applies, "cudnn"
// cuDNN's algorithms alone, and "" (auto) the faster of the two per pass,
// timed when the shape changes.
func convWayMode(ctx *device.Context) (string, error) {
	switch m := ctx.Settings().ConvGEMM; m {
	case settings.ConvGEMMAuto:
		return "", nil
	case settings.ConvGEMMAlways:
		return "gemm", nil
	case settings.ConvGEMMNever:
		return "cudnn", nil
	default:
		return "", fmt.Errorf("ConvGEMM setting %v: want auto, gemm or cudnn", m)
	}
}

// wayFor returns the way of our own that applies to l's geometry in its
// order (channelsLast), or nil: the depthwise kernels, the pointwise GEMMs
// (which would take a GEMM per channel of a depthwise 1x1), or the
// lowered GEMMs of few channels. Channels-last, the depthwise kernels
// take channels in eights, and the pointwise way one group without a
// stride. It is kept across shapes, with its
// buffers, until the engine's type or order changes (SetReduced).
func wayFor[T layer.Float](l *convBase[T], channelsLast bool) convWay[T] {
	switch {
	case depthwiseApplies(l):
		if channelsLast && !depthwiseChannelsLast(l) {
			return nil
		}
		return &depthwiseConv[T]{channelsLast: channelsLast}
	case pointwiseApplies(l):
		if channelsLast && !pointwiseChannelsLast(l) {
			return nil
		}
		return &pointwiseConv[T]{channelsLast: channelsLast}
	case loweredApplies(l):
		if channelsLast && !loweredChannelsLast(l) {
			return nil
		}
		return &loweredConv[T]{channelsLast: channelsLast}
	}
	return nil
}

// chooseWay picks the layer's GEMM way, if one applies, and sets for each
// pass whether it beats cuDNN's algorithm: both run on the layer's own
// bottom and top (as cuDNN's Find does) and write the gradients to
// scratch memory.
func (e *convolutionDNN[T]) chooseWay(x, y *blob.Blob[T], limit int) error {
	l := e.l
	e.use = [3]bool{}
	if e.way == nil {
		if e.way = wayFor(&l.convBase, e.red.ChannelsLast()); e.way == nil {
			return nil // kernel, pad, stride and groups are fixed: no way at any shape
		}
	}
	var half cuda.BlasType
	if e.red.On() {
		half = e.red.BlasType()
	}
	e.way.setType(half)
	mode, err := convWayMode(l.Context())
	if err != nil {
		return err
	}
	if err := e.way.reshape(&l.convBase, x, limit); err != nil {
		return err
	}
	if mode == "" && l.Context().Deterministic() {
		mode = "cudnn" // no timing: the same way on every run
	}
	if mode != "" {
		e.use = [3]bool{mode == "gemm", mode == "gemm", mode == "gemm"}
		return nil
	}
	// The timing runs on trial memory, its workspace included, as find's:
	// the passes then run in the workspace the net's memory plan places
	// for them (layer.WorkspaceUser), and growing the context's shared one
	// here would hold the largest layer's need for the whole run.
	wsBytes := max(e.fwd.Workspace, e.bwdData.Workspace, e.bwdFilter.Workspace, e.way.bytes(&l.convBase, true, true, true))
	t, err := newTrialMemory(l.Context().Device(), e.way.elemBytes(), x.Count(), l.Blobs()[0].Count(), y.Count(), wsBytes)
	if err != nil {
		return err
	}
	defer func() {
		l.Context().Synchronize()
		t.free()
	}()
	g := l.GPU()
	cb, xp, wp, yp, scratch, ws := &l.convBase, t.x, t.w, t.y, t.d, t.ws
	ways := [3][2]func() error{
		passForward: {
			func() error { return e.dnn.ConvForward(1, e.x.Desc, xp, e.w, wp, e.conv, e.fwd, ws, 0, e.y.Desc, yp) },
			func() error { return e.way.forward(cb, g, xp, wp, yp, ws) }},
		passBackwardData: {
			func() error {
				return e.dnn.ConvBackwardData(1, e.w, wp, e.y.Desc, yp, e.conv, e.bwdData, ws, 0, e.x.Desc, scratch)
			},
			func() error { return e.way.backwardData(cb, g, wp, yp, scratch, ws) }},
		passBackwardFilter: {
			func() error {
				return e.dnn.ConvBackwardFilter(1, e.x.Desc, xp, e.y.Desc, yp, e.conv, e.bwdFilter, ws, 1, e.w, scratch)
			},
			func() error { return e.way.backwardFilter(cb, g, xp, yp, scratch, ws) }},
	}
	for pass, f := range ways {
		tg, err := leastTimeOnDevice(l.Context(), f[1])
		if err != nil {
			return err
		}
		tc, err := leastTimeOnDevice(l.Context(), f[0])
		if err != nil {
			// cuDNN refuses some algorithms it chose itself in 16 bits
			// (CUDNN_STATUS_BAD_PARAM; withFallback): our way computes
			// the pass instead.
			logf.Infof(l.Logger(), "Layer %s: cuDNN's algorithm for pass %d failed (%v); the GEMM way computes it", l.Name(), pass, err)
			e.use[pass] = true
			continue
		}
		// Near-equal times keep cuDNN's, so that two processes of one
		// net (a data-parallel job, which runs at its slowest rank's
		// pace) choose alike.
		e.use[pass] = tg < tc*wayMargin
	}
	logf.Debugf(l.Logger(), "Layer %s: gocaffe's way takes the passes %v (forward, data gradient, weight gradient)", l.Name(), e.use)
	return nil
}

// wayMargin is how much faster than cuDNN's algorithm gocaffe's way must
// time to take a pass: timings of a few microseconds move by a few
// percent from run to run.
const wayMargin = 0.97

// leastTimeOnDevice is the lesser of two timeOnDevice measures of f.
func leastTimeOnDevice(ctx *device.Context, f func() error) (float32, error) {
	a, err := timeOnDevice(ctx, f)
	if err != nil {
		return 0, err
	}
	b, err := timeOnDevice(ctx, f)
	return min(a, b), err
}

// wayWorkspace is the workspace of the passes taken the GEMM way.
func (e *convolutionDNN[T]) wayWorkspace() int {
	if e.way == nil {
		return 0
	}
	return e.way.bytes(&e.l.convBase, e.use[passForward], e.use[passBackwardData], e.use[passBackwardFilter])
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
