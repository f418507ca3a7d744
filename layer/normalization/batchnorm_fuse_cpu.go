package normalization

import (
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// bnFuseHost lets BatchNorm's host passes compute the Scale in place on
// its top (Caffe's BatchNorm + Scale pair) and a zero-slope ReLU in place
// on the same blob after it, as the cuDNN engine does on the GPU. Apart,
// the three layers sweep the activations some eleven times forward (BN
// reads x three times and writes y and xNorm, the Scale copies its input
// aside and writes y, the ReLU reads and writes y) and some twelve times
// backward, each sweep over memory the size of the blob, which on the host
// is the cost: ResNet-50's BatchNorm, Scale and ReLU took 154 ms forward
// and 212 ms backward of a 2.6 s training pass at batch 8 on two cores,
// 108 and 151 fused (docs/performance.md).
//
// The fused passes go channel by channel (each part of the cores takes a
// range of channels): a channel's rows, one per image, are a few hundred
// KB at most, which stay in a core's L2 cache between the channel's
// sweeps, so that the blob crosses memory about once a sweep of the
// whole: forward, x is read and y and xNorm written; backward, dy and
// xNorm are read (the ReLU's mask computed again from xNorm: backwardRow)
// and dx written.
//
// Every value goes through the operations of the three layers' own host
// passes, in their order and rounded as there (the row sums through the
// same gemv calls, the channel sums through a gemv over the channel's row
// sums, which adds them in the same order as the one over all channels),
// so the blobs, the statistics and the gradients are the unfused passes'
// bit for bit (TestBatchNormFusedHostMatchesUnfused).
type bnFuseHost[T layer.Float] struct {
	bn    *batchNormLayer[T]
	scale *scaleLayer[T] // the fused Scale, nil for none
	relu  layer.Layer[T] // the fused ReLU, nil for none
	// scaleOn and reluOn say whether the shapes of the last forward pass
	// let it compute them (decide); each pass also asks whether a partial
	// pass suspends the fusion (scaleComputed, reluComputed).
	scaleOn, reluOn bool

	// A pass's operands, set for its duration.
	x, y, xn, dy, dx         []T // whole blobs
	mean, std, varSum        []T // per channel
	gamma, beta              []T // the Scale's vector and bias (nil: none)
	dGamma, dBeta            []T // their diffs to add to (nil: not wanted)
	batchOnes                []T
	num, channels, spatial   int
	alpha, eps, dxScale      T
	global, wantDx, withReLU bool
	// Per part of the cores: four arrays of a channel's row sums (one
	// per image).
	rows []bnFusePart[T]
	// Method values, made once: a pass allocates nothing.
	forwardPart, backwardPart func(part, lo, hi int)
}

// bnFusePart is the scratch of one part of a fused pass.
type bnFusePart[T layer.Float] struct {
	sums                 []T // 4 x num + 2: the channel's row sums, then two channel sums
	s1, s2, sBeta, sGamm []T // views of sums: the row sums
	st                   []T // the last two of sums
}

// FuseNext lets the layer's engine compute next's passes with its own:
// the cuDNN engine's (fuseNextDNN) or the host's (fuseNextHost).
func (l *batchNormLayer[T]) FuseNext(next, via layer.Layer[T], needBackward bool) bool {
	if e, ok := l.Engine().(*batchNormDNN[T]); ok {
		return l.fuseNextDNN(e, next, via, needBackward)
	}
	return l.fuseNextHost(next, via, needBackward)
}

// fuseNextHost lets the host passes compute next (see bnFuseHost): a
// Scale in place on the layer's top whose vector is the channels' (axis
// 1, one axis) and learnable, then a ReLU of slope 0 in place on the same
// blob after the Scale or the layer itself. The three compute on the
// host, and the net runs the backward pass, which computes theirs.
func (l *batchNormLayer[T]) fuseNextHost(next, via layer.Layer[T], needBackward bool) bool {
	f := &l.fused
	if !needBackward || l.EngineOnGPU() || next.LayerBase().EngineOnGPU() {
		return false
	}
	switch next.Type() {
	case "Scale":
		s, ok := next.(*scaleLayer[T])
		if !ok || via != layer.Layer[T](l) || f.scale != nil || !s.perChannel(l) {
			return false
		}
		f.bn, f.scale, f.scaleOn = l, s, true
		s.fusedInput = l.xNorm
		s.FusedInto(l, f.scaleComputed, false)
		return true
	case "ReLU":
		if next.LayerBase().Param().GetReluParam().GetNegativeSlope() != 0 || f.relu != nil {
			return false
		}
		want := layer.Layer[T](l)
		if f.scale != nil {
			want = f.scale
		}
		if via != want {
			return false
		}
		f.bn, f.relu, f.reluOn = l, next, true
		next.LayerBase().FusedInto(l, f.reluComputed, false)
		return true
	}
	return false
}

// perChannel says whether the Scale multiplies each of l's channels by a
// learnable factor of its own: one bottom, a vector of l's channel count
// on axis 1.
func (s *scaleLayer[T]) perChannel(l *batchNormLayer[T]) bool {
	return len(s.Blobs()) > 0 && s.shape.Outer == l.num && s.shape.Dim == l.channels && s.shape.Inner == l.spatial &&
		s.Blobs()[0].Count() == l.channels && l.spatial > 0
}

// scaleComputed says whether the layer's passes compute the Scale's: the
// forward pass did, and no partial pass splits the pair now.
func (f *bnFuseHost[T]) scaleComputed() bool {
	return f.scale != nil && f.scaleOn && !f.bn.FusionSuspended()
}

// reluComputed says whether the layer's passes compute the ReLU's: the
// forward pass did, and the layer before the ReLU (the Scale, itself
// computed, or the BatchNorm) has no fusion suspended.
func (f *bnFuseHost[T]) reluComputed() bool {
	if f.relu == nil || !f.reluOn {
		return false
	}
	if f.scale != nil {
		return f.scaleComputed() && !f.scale.FusionSuspended()
	}
	return !f.bn.FusionSuspended()
}

// decide sets, at the start of a forward pass, whether its shapes let it
// compute the Scale and the ReLU: the Scale's vector must still be the
// channels', and the ReLU comes after the Scale when there is one.
func (f *bnFuseHost[T]) decide(l *batchNormLayer[T]) {
	f.scaleOn = f.scale != nil && f.scale.Blobs()[0].Count() == l.channels && l.spatial > 0
	f.reluOn = f.relu != nil && l.spatial > 0 && (f.scale == nil || f.scaleOn)
}

// active says whether the current pass is fused at all.
func (f *bnFuseHost[T]) active() bool { return f.scaleComputed() || f.reluComputed() }

// forward computes the layer's forward pass with the fused layers'.
func (f *bnFuseHost[T]) forward(l *batchNormLayer[T], bottom, top []*blob.Blob[T]) {
	if f.forwardPart == nil {
		f.forwardPart, f.backwardPart = f.forwardChannels, f.backwardChannels
	}
	f.setShape(l)
	f.x, f.y, f.xn = bottom[0].CPUData(), top[0].MutableCPUData(), l.xNorm.MutableCPUData()
	f.mean, f.std = l.mean.MutableCPUData(), l.variance.MutableCPUData()
	f.global, f.withReLU, f.eps = l.useGlobal, f.reluComputed(), l.eps
	f.setScale(false)
	if f.global {
		var s T
		if v := l.Blobs()[2].CPUData()[0]; v != 0 {
			s = 1 / v
		}
		mathfn.Scale(l.channels, s, l.Blobs()[0].CPUData(), f.mean)
		mathfn.Scale(l.channels, s, l.Blobs()[1].CPUData(), f.std)
		mathfn.AddScalar(l.channels, l.eps, f.std)
		mathfn.Sqrt(l.channels, f.std, f.std)
	} else {
		f.alpha = 1 / T(l.num*l.spatial)
		f.varSum = l.numByChans.MutableCPUData()[:l.channels] // free until the backward pass
	}
	kit.UnitsParallel(l.channels, l.num*l.spatial, f.forwardPart)
	if !f.global {
		bnUpdateStatistics(l, device.Host[T](l.Context()), l.num*l.channels*l.spatial, f.mean, f.varSum)
	}
	f.clear()
}

// setShape sizes the scratch for l's current shape.
func (f *bnFuseHost[T]) setShape(l *batchNormLayer[T]) {
	f.num, f.channels, f.spatial = l.num, l.channels, l.spatial
	f.batchOnes = l.batchOnes.CPUData()
	parts := mathfn.Parts(l.channels)
	for len(f.rows) < parts {
		f.rows = append(f.rows, bnFusePart[T]{})
	}
	for p := range parts {
		r := &f.rows[p]
		n := l.num
		r.sums = kit.Grow(r.sums, 4*n+2)
		r.s1, r.s2, r.sBeta, r.sGamm, r.st = r.sums[:n], r.sums[n:2*n], r.sums[2*n:3*n], r.sums[3*n:4*n], r.sums[4*n:]
	}
}

// setScale reads the fused Scale's vector and bias, and with grads the
// diffs its backward pass adds to (nil where not wanted).
func (f *bnFuseHost[T]) setScale(grads bool) {
	f.gamma, f.beta, f.dGamma, f.dBeta = nil, nil, nil, nil
	s := f.scale
	if !f.scaleComputed() {
		return
	}
	f.gamma = s.Blobs()[0].CPUData()
	if s.biasIndex >= 0 {
		f.beta = s.Blobs()[s.biasIndex].CPUData()
	}
	if !grads {
		return
	}
	if s.ParamPropagateDown(0) {
		f.dGamma = s.Blobs()[0].MutableCPUDiff()
	}
	if s.biasIndex >= 0 && s.ParamPropagateDown(s.biasIndex) {
		f.dBeta = s.Blobs()[s.biasIndex].MutableCPUDiff()
	}
}

// clear drops the pass's operands.
func (f *bnFuseHost[T]) clear() {
	f.x, f.y, f.xn, f.dy, f.dx, f.mean, f.std, f.varSum = nil, nil, nil, nil, nil, nil, nil, nil
	f.gamma, f.beta, f.dGamma, f.dBeta, f.batchOnes = nil, nil, nil, nil, nil
}

// row returns the elements of image n's channel c in a.
func (f *bnFuseHost[T]) row(a []T, n, c int) []T {
	off := (n*f.channels + c) * f.spatial
	return a[off : off+f.spatial : off+f.spatial]
}

// channelSum sets *dst = beta * *dst + the sum of the row sums, as the
// gemv of bnChannelSum (and of the Scale's backward pass) adds a column.
func (f *bnFuseHost[T]) channelSum(sums []T, beta T, dst []T) {
	mathfn.Gemv(blas.Trans, f.num, 1, 1, sums, f.batchOnes, beta, dst)
}

// forwardChannels computes channels [lo, hi): their statistics (batch
// ones), then y = relu(xNorm * gamma + beta) and xNorm.
func (f *bnFuseHost[T]) forwardChannels(part, lo, hi int) {
	p := &f.rows[part]
	for c := lo; c < hi; c++ {
		if !f.global {
			f.statistics(p, c)
		}
		m, s := f.mean[c], f.std[c]
		for n := range f.num {
			xs, ys, xn := f.row(f.x, n, c), f.row(f.y, n, c), f.row(f.xn, n, c)
			if f.gamma != nil && f.beta != nil {
				f.normScaleReLU(xs, ys, xn, m, s, c)
				continue
			}
			for i := mathfn.BNNormalizePrefix(xs, ys, xn, m, s); i < len(xs); i++ {
				q := (xs[i] - m) / s
				ys[i], xn[i] = q, q
			}
			f.scaleReLU(ys, c)
		}
	}
}

// statistics computes channel c's mean, its variance (to update the
// running sums with) and deviation, as bnHost does: the rows' sums of x,
// then of (x - mean)^2. The rows' sums are taken in vector lanes (rowSum),
// the channel's over them as bnHost's gemv takes them.
func (f *bnFuseHost[T]) statistics(p *bnFusePart[T], c int) {
	for n := range f.num {
		p.s1[n] = f.alpha * rowSum(f.row(f.x, n, c))
	}
	f.channelSum(p.s1, 0, f.mean[c:c+1])
	m := f.mean[c]
	for n := range f.num {
		xs := f.row(f.x, n, c)
		sq, done := mathfn.BNSqDevSumPrefix(xs, m)
		for _, v := range xs[done:] {
			d := v - m
			sq += d * d
		}
		p.s1[n] = f.alpha * sq
	}
	f.channelSum(p.s1, 0, f.varSum[c:c+1])
	f.std[c] = T(math.Sqrt(float64(f.varSum[c] + f.eps))) // AddScalar, then Sqrt
}

// rowSum returns the sum of row. The unfused passes sum a row with a gemv
// (a dot product with a row of ones: SSE on amd64, and a call per row),
// which with the rows' other sweeps took ResNet-50's chains at batch 8 to
// 63 ms forward and 89 backward a pass on two Zen 4 cores; the vector
// kernels' sums (another order: rounding) take the row once, in the cache.
func rowSum[T layer.Float](row []T) T {
	s, done := mathfn.BNSumPrefix(row)
	for _, v := range row[done:] {
		s += v
	}
	return s
}

// normScaleReLU sets a row of channel c's xNorm = (x - m) / s and y =
// xNorm * gamma + beta, then the ReLU's zero-slope max where fused, in one
// sweep: the values of BNNormalizePrefix, the Scale's MulAddScalar and
// the ReLU's pass, bit for bit.
func (f *bnFuseHost[T]) normScaleReLU(xs, ys, xn []T, m, s T, c int) {
	g, b := f.gamma[c], f.beta[c]
	done := mathfn.BNNormScalePrefix(xs, ys, xn, m, s, g, b, f.withReLU)
	for i := done; i < len(xs); i++ {
		q := (xs[i] - m) / s
		ys[i], xn[i] = T(q*g)+b, q
	}
	if f.withReLU {
		mathfn.ReLUZero(ys[done:len(xs)], ys[done:len(xs)])
	}
}

// scaleReLU applies the fused Scale and ReLU to a row of channel c, in
// the cache: the Scale's host pass (scaleHost.rows), then the ReLU's.
func (f *bnFuseHost[T]) scaleReLU(ys []T, c int) {
	switch {
	case f.gamma == nil:
	case f.beta == nil:
		mathfn.MulScalar(len(ys), f.gamma[c], ys, ys)
	default:
		mathfn.MulAddScalar(len(ys), f.gamma[c], f.beta[c], ys, ys)
	}
	if f.withReLU {
		mathfn.ReLUZero(ys, ys)
	}
}

// backward computes the layer's backward pass with the fused layers':
// their parameters' gradients, the blob's diff as they leave it (dy times
// the ReLU's mask, times the Scale's vector) and, when wanted, dx.
func (f *bnFuseHost[T]) backward(l *batchNormLayer[T], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) {
	f.setShape(l)
	f.xn, f.std = l.xNorm.CPUData(), l.variance.CPUData()
	f.dy = top[0].MutableCPUDiff()
	f.global, f.withReLU, f.wantDx = l.useGlobal, f.reluComputed(), propagateDown[0]
	if f.wantDx {
		f.dx = bottom[0].MutableCPUDiff()
	}
	f.setScale(true)
	f.dxScale = -1 / T(l.num*l.spatial)
	kit.UnitsParallel(l.channels, l.num*l.spatial, f.backwardPart)
	f.clear()
}

// backwardChannels computes channels [lo, hi): row by row the ReLU's and
// the Scale's gradients into dy's memory and their sums, then dx.
func (f *bnFuseHost[T]) backwardChannels(part, lo, hi int) {
	p := &f.rows[part]
	for c := lo; c < hi; c++ {
		for n := range f.num {
			f.backwardRow(p, n, c)
		}
		if f.dBeta != nil {
			f.channelSum(p.sBeta, 1, f.dBeta[c:c+1])
		}
		if f.dGamma != nil {
			f.channelSum(p.sGamm, 1, f.dGamma[c:c+1])
		}
		if !f.wantDx {
			continue
		}
		if f.global {
			for n := range f.num {
				f.divideRow(n, c)
			}
			continue
		}
		f.channelSum(p.s1, 0, p.st[:1])
		f.channelSum(p.s2, 0, p.st[1:])
		s1, s2, std := p.st[0], p.st[1], f.std[c]
		for n := range f.num {
			y, dy, dx := f.row(f.xn, n, c), f.row(f.dy, n, c), f.row(f.dx, n, c)
			for i := mathfn.BNDxPrefix(y, dy, dx, s1, s2, f.dxScale, std); i < len(y); i++ {
				t := T(y[i]*s1) + s2
				dx[i] = (T(t*f.dxScale) + dy[i]) / std
			}
		}
	}
}

// backwardRow computes image n's row of channel c in one sweep: dz = dy
// times the ReLU's mask (reluBack), the Scale's row sums of dz and dz*xNorm
// and dz*gamma into dy's memory (scaleBackHost.rows; gamma 1 without a
// Scale, which leaves dz as it is), then BatchNorm's row sums of
// dy*xNorm and dy (bnBackHost.sumRows). The mask is y > 0 with y the
// forward pass's xNorm*gamma + beta before its ReLU, computed again from
// xNorm as that pass rounded it (gamma 1 and beta 0 where the Scale or its
// bias is missing: the same values), rather than read from the top: the
// row of y is a sweep over memory the size of the blob (ResNet-50's
// chains read some 110 MB of it a pass at batch 8), xNorm's is read anyway.
// The element-wise values are the unfused passes' bit for bit, the sums in
// another order (vector lanes).
func (f *bnFuseHost[T]) backwardRow(p *bnFusePart[T], n, c int) {
	dy, xn := f.row(f.dy, n, c), f.row(f.xn, n, c)
	g, b := T(1), T(0)
	if f.gamma != nil {
		g = f.gamma[c]
	}
	if f.beta != nil {
		b = f.beta[c]
	}
	sums, done := mathfn.BNBackRowPrefix(dy, xn, g, b, f.withReLU)
	for i := done; i < len(dy); i++ {
		dz := dy[i]
		if f.withReLU {
			y := T(xn[i]*g) + b
			dz *= T(kit.Btoi(y > 0)) + 0*T(kit.Btoi(y <= 0))
		}
		sums[0] += dz
		sums[1] += T(dz * xn[i])
		d := dz * g
		dy[i] = d
		sums[2] += T(xn[i] * d)
		sums[3] += d
	}
	p.sBeta[n], p.sGamm[n], p.s1[n], p.s2[n] = sums[0], sums[1], sums[2], sums[3]
}

// divideRow sets dx = dy / std over image n's row of channel c: the
// backward pass with global statistics (bnHost.divideRows).
func (f *bnFuseHost[T]) divideRow(n, c int) {
	s := f.std[c]
	dy, dx := f.row(f.dy, n, c), f.row(f.dx, n, c)
	for i, v := range dy {
		dx[i] = v / s
	}
}
