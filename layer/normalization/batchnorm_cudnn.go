package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// bnBuffers is how many per-channel buffers cuDNN's batch normalization
// takes (see cuda.BatchNormBuffers).
const bnBuffers = 8

// batchNormDNN is BatchNorm's cuDNN engine. It computes each pass in a
// few reads of the data (gocaffe's CAFFE engine, Caffe's formulation in
// BLAS calls, takes about fifteen and two more buffers of the bottom's
// size), by default on gocaffe's own kernels (batchnorm_kernels.go),
// with GOCAFFE_BN=cudnn on cuDNN's batch normalization, whose affine part
// is made the identity (scale one, bias zero), as Caffe's BatchNorm has
// none. Either way the running sums are updated as Caffe does from the
// batch's mean and unbiased variance, and a Scale in place after the
// layer can be computed in the same passes (Fuse). On cuDNN,
// use_global_stats, a single value per channel and an epsilon below
// cuDNN's minimum go to the CAFFE engine; the own kernels take them all.
type batchNormDNN[T layer.Float] struct {
	l     *batchNormLayer[T]
	dnn   *cuda.DNN
	caffe layer.Engine[T]
	x, bn kit.TensorDesc[T]
	stats *blob.Blob[T] // bnBuffers x C, the first two ones and zeros
	saved *blob.Blob[T] // in place: the bottom's data (forward), the top's gradient (backward)
	onesC int           // the channel count stats holds ones and zeros for
	// active says this engine computes the passes of the current shape
	// (else the CAFFE engine does).
	active bool
	own    *bnScratch[T] // the own kernels' memory; nil on cuDNN
	// scale, if not nil, is the Scale after the layer, in place on its
	// top, whose scale and bias this engine applies, on cuDNN's kernels or
	// its own (Fuse).
	scale *scaleLayer[T]
	// relu, if not nil, is the ReLU in place after the layer or its Scale
	// that the own kernels apply (Fuse); inPlace says the layer's top is
	// its bottom, which that needs.
	relu      layer.Layer[T]
	reluSlope T
	inPlace   bool
	// exchanged says the top's data and saved's are exchanged (Forward,
	// in place): saved holds x, the top y, until RestoreTopData.
	exchanged bool
	top       *blob.Blob[T] // in place, the top (and bottom)
	// red, when on, has the own kernels compute in a 16-bit type
	// (batchnorm_reduced.go).
	red kit.Reduced[T]
}

// fusedReLU returns the ReLU this pass computes too, or nil: the pass
// must be the own kernels', in place, with the Scale (if one was fused)
// fused too, and the layer before the ReLU (this one or the Scale) must
// not have its fusion suspended.
func (e *batchNormDNN[T]) fusedReLU() layer.Layer[T] {
	if e.relu == nil || !e.active || e.own == nil || !e.inPlace {
		return nil
	}
	if e.scale != nil && (e.fusedScale() == nil || e.scale.FusionSuspended()) {
		return nil
	}
	if e.scale == nil && e.l.FusionSuspended() {
		return nil
	}
	return e.relu
}

// fusedScale returns the Scale this pass computes too, or nil: the layer
// must compute with cuDNN and the Scale's vector must be the channels'.
// In a 16-bit type the layer must be in place too: the top's diff is
// then dx, and no dy * gamma is left for the Scale's users to read.
func (e *batchNormDNN[T]) fusedScale() *scaleLayer[T] {
	s, l := e.scale, e.l
	if s == nil || !e.active || l.FusionSuspended() || s.shape.Outer != l.num || s.shape.Dim != l.channels || s.shape.Inner != l.spatial {
		return nil
	}
	if e.red.On() && !e.inPlace {
		return nil
	}
	return s
}

func newBatchNormDNN[T layer.Float](l *batchNormLayer[T], dnn *cuda.DNN) (layer.Engine[T], error) {
	caffe, err := layer.NewEngine[T](l, layer.EngineCaffe)
	if err != nil {
		return nil, err
	}
	e := &batchNormDNN[T]{l: l, dnn: dnn, caffe: caffe}
	own, blocks, err := bnKernelMode(l.Context())
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", l.Name(), err)
	}
	if own {
		e.own = &bnScratch[T]{blocks: blocks}
		if err := e.own.init(l); err != nil {
			return nil, err
		}
	}
	if e.stats, err = l.NewBlob(); err != nil {
		return nil, err
	}
	if e.saved, err = l.NewBlob(); err != nil {
		return nil, err
	}
	return e, nil
}

// Reshaped decides who computes this shape and describes it to cuDNN:
// N x C x (the spatial axes as one) x 1.
func (e *batchNormDNN[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	l := e.l
	e.inPlace = bottom[0] == top[0]
	e.top = nil
	if e.inPlace {
		e.top = top[0]
	}
	if e.own != nil {
		e.active = l.num*l.spatial > 0 && l.channels > 0
		if !e.active {
			return nil
		}
		if err := e.saved.ReshapeLike(bottom[0]); err != nil {
			return err
		}
		return e.own.reshape(l.num, l.channels, l.spatial, e.red.ChannelsLast())
	}
	minEps, ok := e.dnn.BatchNormMinEpsilon()
	e.active = ok && !l.useGlobal && float64(l.eps) >= minEps && l.num*l.spatial > 1 && l.channels > 0
	if !e.active {
		return nil
	}
	if err := e.x.Set(l.num, l.channels, l.spatial, 1); err != nil {
		return err
	}
	if err := e.bn.Set(1, l.channels, 1, 1); err != nil {
		return err
	}
	if err := e.saved.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if e.onesC != l.channels {
		if err := e.stats.Reshape([]int{bnBuffers * l.channels}); err != nil {
			return err
		}
		g := l.GPU()
		s := g.MutableData(e.stats)
		g.Set(l.channels, 1, s)
		g.Set(l.channels, 0, g.Offset(s, l.channels))
		if err := g.Err(); err != nil {
			return err
		}
		e.onesC = l.channels
	}
	return nil
}

// buffers returns cuDNN's per-channel buffers, carved out of stats.
func (e *batchNormDNN[T]) buffers() cuda.BatchNormBuffers {
	g, c := e.l.GPU(), e.l.channels
	s := g.MutableData(e.stats)
	at := func(i int) cuda.DevicePtr { return g.Offset(s, i*c) }
	return cuda.BatchNormBuffers{Desc: e.bn.Desc, Ones: at(0), Zeros: at(1), Mean: at(2), Var: at(3),
		SaveMean: at(4), SaveInvStd: at(5), DScale: at(6), DBias: at(7)}
}

// keepsX says whether the backward pass reads x: with global statistics
// only a fused Scale's gradient and a fused ReLU's mask do.
func (e *batchNormDNN[T]) keepsX() bool {
	return !e.l.useGlobal || e.fusedScale() != nil || e.fusedReLU() != nil
}

// Forward normalizes with the batch's statistics and folds them into the
// running sums, or with the running sums.
func (e *batchNormDNN[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if !e.active {
		return e.caffe.Forward(bottom, top)
	}
	if e.red.On() {
		return e.forwardReduced(bottom, top)
	}
	l, g := e.l, e.l.GPU()
	n := bottom[0].Count()
	x, y := g.Data(bottom[0]), g.MutableData(top[0])
	swap := false
	if bottom[0] == top[0] && e.keepsX() {
		// The backward pass needs x, which y would overwrite: y goes to
		// the scratch blob, whose memory the top then takes until the
		// net restores them (no copy; x is copied aside when they are
		// still exchanged from the last pass).
		if swap = !e.exchanged && e.saved.Data().Storage() == top[0].Data().Storage(); swap {
			y = g.MutableData(e.saved)
		} else {
			g.Copy(n, x, g.MutableData(e.saved))
			x = g.Data(e.saved)
		}
	}
	if e.own != nil {
		if err := e.forwardOwn(g, x, y); err != nil {
			return err
		}
		if swap {
			if err := e.exchange(); err != nil {
				return err
			}
		}
		return g.Err()
	}
	b := e.buffers()
	if s := e.fusedScale(); s != nil {
		b.Ones = g.Data(s.Blobs()[0])
		if s.biasIndex >= 0 {
			b.Zeros = g.Data(s.Blobs()[s.biasIndex])
		}
	}
	if err := e.dnn.BatchNormForwardTraining(e.x.Desc, x, e.x.Desc, y, &b, float64(l.eps)); err != nil {
		return err
	}
	if swap {
		if err := e.exchange(); err != nil { // the top holds y, the scratch blob x
			return err
		}
	}
	// Caffe's running sums: s = maf*s + 1, mean = maf*mean + batch mean,
	// var = maf*var + unbiased batch variance (cuDNN's already).
	var a cuda.Args
	kit.ScalarArg(a.Int(l.channels), l.maf).Ptr(b.Mean).Ptr(b.Var)
	a.Ptr(g.MutableData(l.Blobs()[2])).Ptr(g.MutableData(l.Blobs()[0])).Ptr(g.MutableData(l.Blobs()[1]))
	if err := g.Err(); err != nil {
		return err
	}
	return launch[T](l.Context(), "batch_norm.cu", "bn_running_sums", l.channels, &a)
}

// Backward computes the bottom's gradient from x, dy and the saved
// statistics, and with a fused Scale that Scale's parameter gradients.
func (e *batchNormDNN[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !e.active {
		return e.caffe.Backward(top, propagateDown, bottom)
	}
	s := e.fusedScale()
	if !propagateDown[0] && s == nil {
		return nil
	}
	g := e.l.GPU()
	if e.red.On() {
		return e.backwardReduced(s, top[0], propagateDown[0], bottom[0])
	}
	if e.own != nil {
		return e.backwardOwn(s, top[0], propagateDown[0], bottom[0])
	}
	n := bottom[0].Count()
	x, dy, dx := g.Data(bottom[0]), g.Diff(top[0]), g.MutableDiff(bottom[0])
	swap := false
	if bottom[0] == top[0] {
		// x is in the scratch blob (Forward). dx would overwrite dy: it
		// goes to the scratch blob's diff, which the bottom then takes,
		// or dy is copied aside.
		x = g.Data(e.saved)
		if swap = propagateDown[0] && e.saved.DiffSwappable(top[0]); swap {
			dx = g.MutableDiff(e.saved)
		} else {
			g.Copy(n, dy, g.MutableDiff(e.saved))
			dy = g.Diff(e.saved)
		}
	}
	if !propagateDown[0] { // only the Scale's gradients are wanted
		dx = g.MutableDiff(e.saved)
		if bottom[0] == top[0] {
			dx = g.MutableDiff(top[0])
		}
	}
	b := e.buffers()
	if s != nil {
		b.Ones = g.Data(s.Blobs()[0])
	}
	if err := e.dnn.BatchNormBackward(e.x.Desc, x, e.x.Desc, dy, e.x.Desc, dx, &b, float64(e.l.eps)); err != nil {
		return err
	}
	if swap {
		e.saved.SwapDiff(top[0]) // the bottom's diff holds dx
	}
	if s != nil {
		c := e.l.channels
		if s.ParamPropagateDown(0) {
			g.Axpy(c, 1, b.DScale, g.MutableDiff(s.Blobs()[0]))
		}
		if s.biasIndex >= 0 && s.ParamPropagateDown(s.biasIndex) {
			g.Axpy(c, 1, b.DBias, g.MutableDiff(s.Blobs()[s.biasIndex]))
		}
	}
	if err := g.Err(); err != nil {
		return err
	}
	return e.scaleTopDiff(s, top[0], propagateDown[0], bottom[0])
}

// scaleTopDiff leaves in the top's diff what the fused Scale's backward
// pass would have: the Scale, in place on the top, replaces dy by dy *
// gamma before BatchNorm reads it. Caffe users see that diff when the
// BatchNorm is not in place (in place, dx replaces it), so it is written
// then, after dx has been computed from dy.
func (e *batchNormDNN[T]) scaleTopDiff(s *scaleLayer[T], top *blob.Blob[T], propagate bool, bottom *blob.Blob[T]) error {
	if s == nil || !propagate || top == bottom {
		return nil
	}
	l := e.l
	g := kit.GPUBroadcasterOf(&l.Base)
	dy := g.MutableDiff(top)
	return g.Broadcast(kit.BroadcastMul, top.Count(), l.channels, l.spatial, dy, g.Data(s.Blobs()[0]), dy)
}

// backwardOwn is Backward on the own kernels, which read dy before they
// write dx: in place, dx goes to dy's memory with no copy or swap.
func (e *batchNormDNN[T]) backwardOwn(s *scaleLayer[T], top *blob.Blob[T], propagate bool, bottom *blob.Blob[T]) error {
	g := e.l.GPU()
	dy := g.Diff(top)
	x := dy // not read
	if e.keepsX() {
		x = g.Data(bottom)
		if bottom == top {
			x = g.Data(e.saved) // x is in the scratch blob (Forward)
		}
	}
	var dx cuda.DevicePtr
	if propagate {
		dx = g.MutableDiff(bottom)
	}
	dGamma, dBeta := s.paramDiffs(g)
	if err := g.Err(); err != nil {
		return err
	}
	if err := e.gradOwn(g, dy, x, dx, dGamma, dBeta); err != nil {
		return err
	}
	return e.scaleTopDiff(s, top, propagate, bottom)
}

// DeviceBackwardReads tells a net's memory plan (layer.DeviceBackwardReader)
// what the GPU engine's backward pass reads: in place, x is in the
// engine's scratch blob (Forward), and the statistics, dy and the fused
// Scale's and ReLU's parameters are all it needs (a fused ReLU's mask is
// recomputed from x), so neither the bottom's nor the top's data; not in
// place, x is the bottom's data.
// exchange gives the top the scratch blob's data memory, which holds y,
// and the scratch blob the top's, which holds x.
func (e *batchNormDNN[T]) exchange() error {
	if err := e.saved.ExchangeData(e.top); err != nil {
		return fmt.Errorf("layer %s: %w", e.l.Name(), err)
	}
	e.exchanged = true
	return nil
}

// restore gives the top and the scratch blob their own data memories
// back, if exchanged.
func (e *batchNormDNN[T]) restore() error {
	if !e.exchanged {
		return nil
	}
	if err := e.top.ExchangeData(e.saved); err != nil {
		return fmt.Errorf("layer %s: %w", e.l.Name(), err)
	}
	e.exchanged = false
	return nil
}

// ExchangeBlob returns the engine's scratch blob when the forward pass
// exchanges its data memory with the top's (layer.TopDataExchanger): in
// place, where the backward pass needs x, which y would overwrite.
func (l *batchNormLayer[T]) ExchangeBlob() *blob.Blob[T] {
	e, ok := l.Engine().(*batchNormDNN[T])
	if !ok || !e.active || !l.EngineOnGPU() || !e.inPlace || !e.keepsX() {
		return nil
	}
	return e.saved
}

// RestoreTopData gives the top its data memory back after a forward pass
// exchanged it (layer.TopDataExchanger).
func (l *batchNormLayer[T]) RestoreTopData() error {
	if e, ok := l.Engine().(*batchNormDNN[T]); ok {
		return e.restore()
	}
	return nil
}

func (l *batchNormLayer[T]) DeviceBackwardReads() (layer.BackwardUse, bool) {
	e, ok := l.Engine().(*batchNormDNN[T])
	if !ok || !e.active || !l.EngineOnGPU() {
		return 0, false
	}
	if e.inPlace {
		return layer.BackwardReadsNeither, true
	}
	return layer.BackwardReadsBottom, true
}

// fuseNextDNN lets the cuDNN engine compute, in its own passes, a Scale in
// place on the layer's top (its vector applied with the normalization,
// its gradients returned from the backward pass: Scale's own passes over
// the activations, about a sixth of a ResNet-50 iteration, go), and a ReLU
// with a slope of at least zero in place on the same blob after the layer
// or that Scale, the layer being in place too (the chain then has one
// blob, whose data and diff are the same fused or not): the own kernels
// apply the ReLU to their output and mask the gradient by recomputing the
// ReLU's input from x, which they read anyway. Both need the backward
// pass, which computes theirs.
func (l *batchNormLayer[T]) fuseNextDNN(e *batchNormDNN[T], next, via layer.Layer[T], needBackward bool) bool {
	if !needBackward {
		return false
	}
	switch next.Type() {
	case "Scale":
		s, ok := next.(*scaleLayer[T])
		if !ok || via != layer.Layer[T](l) {
			return false
		}
		e.scale = s
		s.FusedInto(l, func() bool { return e.fusedScale() == s }, false)
		return true
	case "ReLU":
		slope := T(next.LayerBase().Param().GetReluParam().GetNegativeSlope())
		if slope < 0 || e.own == nil || !e.inPlace { // inPlace: set by the set-up's Reshaped
			return false
		}
		want := layer.Layer[T](l)
		if e.scale != nil {
			want = e.scale
		}
		if via != want {
			return false
		}
		e.relu, e.reluSlope = next, slope
		next.LayerBase().FusedInto(l, func() bool { return e.fusedReLU() == next }, false)
		return true
	}
	return false
}

// paramDiffs returns the device diffs of a fused Scale's scale and bias
// that its backward pass adds to, 0 for each not wanted (or no Scale).
func (s *scaleLayer[T]) paramDiffs(g *device.GPUView[T]) (dGamma, dBeta cuda.DevicePtr) {
	if s == nil {
		return 0, 0
	}
	if s.ParamPropagateDown(0) {
		dGamma = g.MutableDiff(s.Blobs()[0])
	}
	if s.biasIndex >= 0 && s.ParamPropagateDown(s.biasIndex) {
		dBeta = g.MutableDiff(s.Blobs()[s.biasIndex])
	}
	return dGamma, dBeta
}
