package vision

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/settings"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// acceptsConvDNN: cuDNN convolves the channel axis 1 with 1 to 3 spatial
// axes (dilation included, which Caffe 1.0's cuDNN layer refused).
func acceptsConvDNN(p *caffepb.LayerParameter) error {
	cp := p.GetConvolutionParam()
	if cp.GetAxis() != 1 && cp.GetAxis() != -3 && cp.GetAxis() != -4 && cp.GetAxis() != -5 {
		return fmt.Errorf("cuDNN convolves channel axis 1, not %d", cp.GetAxis())
	}
	if cp.GetForceNdIm2Col() {
		return errors.New("force_nd_im2col asks for Caffe's im2col")
	}
	return nil
}

// convolutionDNN is Convolution's cuDNN engine: one call per bottom for
// the whole batch and every group, the algorithms timed once per shape
// (cuDNN's Find, or its heuristics if that fails) within the context's
// workspace bound.
type convolutionDNN[T layer.Float] struct {
	l    *convolutionLayer[T]
	dnn  *cuda.DNN
	x, y kit.TensorDesc[T]
	w    *cuda.FilterDesc
	conv *cuda.ConvDesc

	fwd, bwdData, bwdFilter cuda.ConvAlgo

	ones   *blob.Blob[T] // ones for the bias gradient's sums
	ones16 *blob.Blob[T] // 16-bit ones for channels-last ones (convolution_reduced.go)

	way convWay[T] // GEMMs of our own (convolution_ways.go), or nil
	// relu, if not nil, is the ReLU in place on the top whose forward
	// pass the bias addition applies (Fuse).
	relu      layer.Layer[T]
	reluSlope T
	use       [3]bool // the passes taken that way, by pass index

	red kit.Reduced[T] // a 16-bit type to compute in (convolution_reduced.go)

	// fwdWS and bwdWS are the workspaces a net's memory plan placed among
	// its activations for the forward and backward passes
	// (layer.WorkspaceUser), nil for the context's shared one.
	fwdWS, bwdWS *syncedmem.SyncedMemory
}

func newConvolutionDNN[T layer.Float](l *convolutionLayer[T], dnn *cuda.DNN) (layer.Engine[T], error) {
	if l.numSpatial < 1 || l.numSpatial > 3 {
		return nil, fmt.Errorf("cuDNN convolves 1 to 3 spatial axes, not %d", l.numSpatial)
	}
	e := &convolutionDNN[T]{l: l, dnn: dnn}
	var err error
	fd := append([]int{l.numOutput, l.channels / l.group}, spatial2(l.kernel, 1)...)
	if e.w, err = cuda.NewFilterDesc(kit.DNNType[T](), fd); err != nil {
		return nil, err
	}
	if e.conv, err = cuda.NewConvDesc(kit.DNNType[T](), spatial2(l.pad, 0), spatial2(l.stride, 1), spatial2(l.dilation, 1), l.group, l.Context().TF32()); err != nil {
		return nil, err
	}
	return e, nil
}

// spatial2 pads per-axis values to at least 2 axes, with fill in front: a
// 1-D convolution is a 2-D one of height 1.
func spatial2(v []int, fill int) []int {
	if len(v) >= 2 {
		return v
	}
	return append([]int{fill}, v...)
}

// Reshaped describes the bottoms and tops and chooses the algorithms when
// the shape changes.
func (e *convolutionDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	l := e.l
	xs := append([]int{l.num, l.channels}, spatial2(bottom[0].Shape()[2:], 1)...)
	ys := append([]int{l.num, l.numOutput}, spatial2(top[0].Shape()[2:], 1)...)
	if e.x.Desc != nil && slices.Equal(e.x.Dims, xs) && slices.Equal(e.y.Dims, ys) {
		return nil
	}
	if err := e.x.SetIn(e.tensorType(), e.layout(), xs...); err != nil {
		return err
	}
	if err := e.y.SetIn(e.tensorType(), e.layout(), ys...); err != nil {
		return err
	}
	if l.biasTerm {
		if err := kit.Ones(l, &e.ones, max(l.num, l.convOutSpatial)); err != nil {
			return err
		}
		if err := e.halfOnes(l.convOutSpatial); err != nil {
			return err
		}
	}
	limit := dnnWorkspaceLimit[T](l.Context())
	if err := e.chooseAlgos(bottom[0], top[0], limit); err != nil {
		return err
	}
	return e.chooseWay(bottom[0], top[0], limit)
}

// biasGradient adds dy summed over images and pixels to the bias diff in
// two GEMVs: each image's channel sums into ws, then their sum over the
// images, as Caffe's own GPU layer adds image by image. On the H100 this
// takes 0.03 ms where cudnnConvolutionBackwardBias took 2.85 ms (CaffeNet's
// conv1 at batch 256: 96 channels of 55x55).
func (e *convolutionDNN[T]) biasGradient(g *device.GPUView[T], dy, ws cuda.DevicePtr) {
	l := e.l
	ones := g.Data(e.ones)
	g.Gemv(blas.NoTrans, l.num*l.numOutput, l.convOutSpatial, 1, dy, ones, 0, ws)
	g.Gemv(blas.Trans, l.num, l.numOutput, 1, ws, ones, 1, g.MutableDiff(l.Blobs()[1]))
}

// chooseAlgos picks cuDNN's algorithm for each pass: the fastest found by
// running them, or the heuristics' where running them failed (memory, say).
func (e *convolutionDNN[T]) chooseAlgos(x, y *blob.Blob[T], limit int) error {
	if e.l.Context().Deterministic() {
		return e.chooseDeterministic(limit)
	}
	if err := e.find(x, y, limit); err == nil {
		return nil
	}
	var err error
	if e.fwd, err = e.dnn.ConvForwardAlgo(e.x.Desc, e.w, e.conv, e.y.Desc, limit); err != nil {
		return err
	}
	if e.bwdData, err = e.dnn.ConvBackwardDataAlgo(e.x.Desc, e.w, e.conv, e.y.Desc, limit); err != nil {
		return err
	}
	e.bwdFilter, err = e.dnn.ConvBackwardFilterAlgo(e.x.Desc, e.w, e.conv, e.y.Desc, limit)
	return err
}

// chooseDeterministic picks, for each pass, the fastest algorithm by
// cuDNN's heuristics among those that give the same bits on every run
// (device.Context.SetDeterministic).
func (e *convolutionDNN[T]) chooseDeterministic(limit int) error {
	var err error
	if e.fwd, err = e.dnn.ConvDeterministicAlgo(0, e.x.Desc, e.w, e.conv, e.y.Desc, limit); err != nil {
		return fmt.Errorf("%s: forward: %w", e.l.Name(), err)
	}
	if e.bwdData, err = e.dnn.ConvDeterministicAlgo(1, e.x.Desc, e.w, e.conv, e.y.Desc, limit); err != nil {
		return fmt.Errorf("%s: data gradient: %w", e.l.Name(), err)
	}
	if e.bwdFilter, err = e.dnn.ConvDeterministicAlgo(2, e.x.Desc, e.w, e.conv, e.y.Desc, limit); err != nil {
		return fmt.Errorf("%s: weight gradient: %w", e.l.Name(), err)
	}
	return nil
}

// dnnWorkspaceLimit bounds the workspace of cuDNN's algorithms: the
// context's convolution bound, or up to 1 GiB where a tenth of the free
// device memory allows (the fastest algorithms of large convolutions want
// hundreds of MB, and the context keeps one workspace for all its layers).
func dnnWorkspaceLimit[T layer.Float](ctx *device.Context) int {
	var zero T
	limit := ctx.ConvWorkspaceElems() * int(unsafe.Sizeof(zero))
	if free, _, err := ctx.Device().MemInfo(); err == nil {
		limit = max(limit, min(1<<30, int(free/10)))
	}
	return limit
}

// find times every algorithm of the three passes (cuDNN's Find, as
// PyTorch's cudnn.benchmark) once per shape, on trial memory of the
// computing type (trialMemory says why not on the layer's blobs).
func (e *convolutionDNN[T]) find(x, y *blob.Blob[T], limit int) error {
	l := e.l
	// The search's workspace is its own, as large as the hungriest
	// algorithm that fits the limit and freed after it: the context's
	// shared one grows only to what the chosen algorithms need.
	need := 0
	for which := range 3 {
		n, err := e.dnn.ConvSearchWorkspace(which, e.x.Desc, e.w, e.conv, e.y.Desc, limit)
		if err != nil {
			return err
		}
		need = max(need, n)
	}
	var zero T
	elem, tensorOps := int(unsafe.Sizeof(zero)), l.Context().TF32()
	if e.red.On() {
		elem, tensorOps = 2, true
	}
	t, err := newTrialMemory(l.Context().Device(), elem, x.Count(), l.Blobs()[0].Count(), y.Count(), need)
	if err != nil {
		return err
	}
	defer func() {
		l.Context().Synchronize()
		t.free()
	}()
	search := e.searcher(tensorOps)
	if e.fwd, err = search(0, 0, e.x.Desc, t.x, e.w, t.w, e.conv, e.y.Desc, t.y, t.ws, need, tensorOps); err != nil {
		return err
	}
	if e.bwdData, err = search(1, 0, e.x.Desc, t.d, e.w, t.w, e.conv, e.y.Desc, t.y, t.ws, need, tensorOps); err != nil {
		return err
	}
	// The FP32 weight gradient adds to the diff (beta 1); the 16-bit one
	// is written to the 16-bit buffer and added to the FP32 diff after.
	filterBeta := 1.0
	if e.red.On() {
		filterBeta = 0
	}
	if e.bwdFilter, err = search(2, filterBeta, e.x.Desc, t.x, e.w, t.d, e.conv, e.y.Desc, t.y, t.ws, need, tensorOps); err != nil {
		return err
	}
	logf.Debugf(l.Logger(), "Layer %s: cuDNN's %v; %v; %v (forward, data gradient, weight gradient)", l.Name(), e.fwd, e.bwdData, e.bwdFilter)
	return nil
}

// convSearch times one pass's algorithms (DNN.ConvFind's arguments, and
// the beta the pass is called with).
type convSearch func(which int, beta float64, x *cuda.TensorDesc, xp cuda.DevicePtr, w *cuda.FilterDesc, wp cuda.DevicePtr, c *cuda.ConvDesc, y *cuda.TensorDesc, yp cuda.DevicePtr, ws cuda.DevicePtr, wsBytes int, tf32 bool) (cuda.ConvAlgo, error)

// searcher is cuDNN's graph API beside its legacy algorithms
// (DNN.ConvFindGraph) where the passes compute on tensor cores in float32
// blobs and the CuDNNGraph setting allows it, the legacy search alone
// elsewhere: strict FP32 keeps the algorithms Caffe's cuDNN layer had.
func (e *convolutionDNN[T]) searcher(tensorOps bool) convSearch {
	var zero T
	if tensorOps && unsafe.Sizeof(zero) == 4 && e.l.Context().Settings().CuDNNGraph == settings.On {
		return e.dnn.ConvFindGraph
	}
	return func(which int, _ float64, x *cuda.TensorDesc, xp cuda.DevicePtr, w *cuda.FilterDesc, wp cuda.DevicePtr, c *cuda.ConvDesc, y *cuda.TensorDesc, yp cuda.DevicePtr, ws cuda.DevicePtr, wsBytes int, tf32 bool) (cuda.ConvAlgo, error) {
		return e.dnn.ConvFind(which, x, xp, w, wp, c, y, yp, ws, wsBytes, tf32)
	}
}

// Forward convolves each bottom and adds the bias.
func (e *convolutionDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	l := e.l
	g := l.GPU()
	ws, err := e.workspace(e.fwdWS, e.forwardWorkspace())
	if err != nil {
		return err
	}
	w := g.Data(l.Blobs()[0])
	for i := range bottom {
		y := g.MutableData(top[i])
		if e.use[passForward] {
			if err := e.way.forward(&l.convBase, g, g.Data(bottom[i]), w, y, ws); err != nil {
				return err
			}
		} else if err := e.dnn.ConvForward(1, e.x.Desc, g.Data(bottom[i]), e.w, w, e.conv, e.fwd, ws, 0, e.y.Desc, y); err != nil {
			return err
		}
		add := kit.GPUBroadcaster[T]{GPUView: g, Ctx: l.Context()}
		if e.fusesReLU() {
			if err := add.BroadcastAddReLU(top[i].Count(), l.numOutput, l.convOutSpatial, y, g.Data(l.Blobs()[1]), e.reluSlope, y); err != nil {
				return err
			}
		} else if l.biasTerm {
			if err := add.Broadcast(kit.BroadcastAdd, top[i].Count(), l.numOutput, l.convOutSpatial, y, g.Data(l.Blobs()[1]), y); err != nil {
				return err
			}
		}
	}
	return g.Err()
}

// Backward accumulates the bias and weight gradients and computes the
// bottoms' where asked.
func (e *convolutionDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if e.red.On() {
		return e.backwardReduced(top, propagateDown, bottom)
	}
	l := e.l
	g := l.GPU()
	ws, err := e.workspace(e.bwdWS, e.backwardWorkspace())
	if err != nil {
		return err
	}
	for i := range top {
		dy := g.Diff(top[i])
		if l.biasTerm && l.ParamPropagateDown(1) {
			e.biasGradient(g, dy, ws)
		}
		if l.ParamPropagateDown(0) && e.use[passBackwardFilter] {
			if err := e.way.backwardFilter(&l.convBase, g, g.Data(bottom[i]), dy, g.MutableDiff(l.Blobs()[0]), ws); err != nil {
				return err
			}
		} else if l.ParamPropagateDown(0) {
			if err := e.dnn.ConvBackwardFilter(1, e.x.Desc, g.Data(bottom[i]), e.y.Desc, dy, e.conv, e.bwdFilter, ws, 1, e.w, g.MutableDiff(l.Blobs()[0])); err != nil {
				return err
			}
		}
		if propagateDown[i] && e.use[passBackwardData] {
			if err := e.way.backwardData(&l.convBase, g, g.Data(l.Blobs()[0]), dy, g.MutableDiff(bottom[i]), ws); err != nil {
				return err
			}
		} else if propagateDown[i] {
			if err := e.dnn.ConvBackwardData(1, e.w, g.Data(l.Blobs()[0]), e.y.Desc, dy, e.conv, e.bwdData, ws, 0, e.x.Desc, g.MutableDiff(bottom[i])); err != nil {
				return err
			}
		}
	}
	return g.Err()
}

// forwardWorkspace is the bytes of workspace the forward pass needs.
func (e *convolutionDNN[T]) forwardWorkspace() int { return max(e.fwd.Workspace, e.wayWorkspace()) }

// backwardWorkspace is the bytes of workspace the backward pass needs,
// the bias gradient's per-image sums among them.
func (e *convolutionDNN[T]) backwardWorkspace() int {
	l := e.l
	biasSums := 0
	if l.biasTerm && (!e.red.On() || e.red.ChannelsLast()) { // row-major 16-bit sums are kernels of their own
		var zero T
		biasSums = l.num * l.numOutput * int(unsafe.Sizeof(zero))
	}
	return max(e.bwdData.Workspace, e.bwdFilter.Workspace, e.wayWorkspace(), biasSums)
}

// workspace returns device memory of bytes for a pass: the plan's where
// it holds them, else the context's shared workspace (shapes grown since
// the plan, a net without one).
func (e *convolutionDNN[T]) workspace(planned *syncedmem.SyncedMemory, bytes int) (cuda.DevicePtr, error) {
	if planned != nil && planned.DeviceSize() >= bytes {
		if p, ok := planned.DeviceBuffer(); ok {
			return p, nil
		}
	}
	return e.l.Context().Workspace(bytes)
}

// WorkspaceBytes returns what the cuDNN engine's passes need of
// workspace for the current shapes and algorithms (layer.WorkspaceUser),
// for a net's memory plan to place it at those passes' steps instead of
// the context holding the largest for the whole run (313 MiB of a
// ResNet-50's at batch 64 in FP32; 417 MiB of a MobileNet's in BFLOAT16).
func (l *convolutionLayer[T]) WorkspaceBytes() (forward, backward int) {
	e, ok := l.Engine().(*convolutionDNN[T])
	if !ok || !l.EngineOnGPU() {
		return 0, 0
	}
	return e.forwardWorkspace(), e.backwardWorkspace()
}

// SetWorkspace gives the engine the plan's workspaces (layer.WorkspaceUser).
func (l *convolutionLayer[T]) SetWorkspace(forward, backward *syncedmem.SyncedMemory) {
	if e, ok := l.Engine().(*convolutionDNN[T]); ok {
		e.fwdWS, e.bwdWS = forward, backward
	}
}

// fusesReLU says whether Forward applies the ReLU after the layer: with
// the bias, in the same pass.
func (e *convolutionDNN[T]) fusesReLU() bool {
	return e.relu != nil && !e.l.FusionSuspended() && e.l.biasTerm
}

// FuseNext lets the cuDNN engine of a convolution with a bias apply a ReLU
// in place on its top in the bias addition: the forward pass only. The
// ReLU's backward pass runs as written, reading its output as in Caffe; so
// this needs no backward pass of the convolution, and test nets fuse too.
func (l *convolutionLayer[T]) FuseNext(next, via layer.Layer[T], needBackward bool) bool {
	e, ok := l.Engine().(*convolutionDNN[T])
	if !ok || !l.biasTerm || via != layer.Layer[T](l) || e.red.On() {
		return false
	}
	e.relu, e.reluSlope = next, T(next.LayerBase().Param().GetReluParam().GetNegativeSlope())
	next.LayerBase().FusedInto(l, e.fusesReLU, true)
	return true
}
