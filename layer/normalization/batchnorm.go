package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "BatchNorm",
		BackwardReads: layer.Reads(layer.BackwardReadsNeither),
		New32:         newBatchNorm[float32], New64: newBatchNorm[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newBatchNormGPU[float32], newBatchNormGPU[float64]), layer.CuDNNEngine(true, nil, newBatchNormDNN[float32], newBatchNormDNN[float64])},
		InPlace:   true,
		CUDAGraph: true,
		FusesNext: []string{"Scale", "ReLU"},
		ONNX:      layer.ONNXConverted,
	})
}

// BatchNorm normalises each channel (axis 1; a 1-axis bottom is one
// channel) to zero mean and unit variance: y = (x - mean) / sqrt(var + eps).
// In training the statistics are the batch's, over the batch and spatial
// axes, and running sums are kept in three blobs: mean and variance [C]
// and the scale factor [1], updated as s = s*maf + 1, mean = maf*mean +
// batch mean, var = maf*var + m/(m-1)*batch var (m = count/C). With
// use_global_stats (default: in the TEST phase) the statistics are the
// running sums divided by s. The three blobs are statistics, not
// parameters: their lr_mult is forced to 0 and backward leaves their diffs
// alone. It works in place.
type batchNormLayer[T layer.Float] struct {
	layer.Base[T]
	useGlobal             bool
	maf, eps              T
	channels              int
	num, spatial          int
	mean, variance        *blob.Blob[T] // this pass's statistics [C]; std after forward
	temp                  *blob.Blob[T] // sqrt(var + eps) broadcast to the bottom's shape
	xNorm                 *blob.Blob[T] // the output, kept for backward (an in-place next layer may overwrite the top)
	numByChans            *blob.Blob[T] // [N*C] scratch
	batchOnes, spatialOne *blob.Blob[T]
	host                  bnHost[T]
	hostBack              bnBackHost[T]
	fused                 bnFuseHost[T] // the Scale and ReLU after it that the host passes compute
	genericBackward       bool          // tests: the generic backward pass on the host
}

// batchNormStats is how many statistics blobs BatchNorm keeps.
const batchNormStats = 3

func newBatchNorm[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &batchNormLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	bp := p.GetBatchNormParam()
	l.useGlobal = l.Phase() == caffepb.Phase_TEST
	if bp != nil && bp.UseGlobalStats != nil {
		l.useGlobal = bp.GetUseGlobalStats()
	}
	l.maf, l.eps = T(bp.GetMovingAverageFraction()), T(bp.GetEps())
	if err := freezeBatchNormStats(l.Param()); err != nil {
		return nil, err
	}
	return l, nil
}

// freezeBatchNormStats sets the statistics' ParamSpecs to lr_mult 0, so that a
// solver never updates them: missing specs are added. A definition that
// declares all three (the old BatchNorm form) has lr_mult and decay_mult
// zeroed, as Caffe's net upgrade does; otherwise a non-zero lr_mult is an
// error, as in Caffe's layer.
func freezeBatchNormStats(p *caffepb.LayerParameter) error {
	if len(p.Param) == batchNormStats {
		for _, ps := range p.Param {
			ps.LrMult, ps.DecayMult = proto.Float32(0), proto.Float32(0)
		}
	}
	for i := range batchNormStats {
		if i == len(p.Param) {
			p.Param = append(p.Param, &caffepb.ParamSpec{LrMult: proto.Float32(0)})
		} else if lr := p.Param[i].GetLrMult(); lr != 0 {
			return fmt.Errorf("cannot configure batch normalization statistics as layer parameters: param %d has lr_mult %v, want 0", i, lr)
		}
	}
	return nil
}

// Type returns "BatchNorm".
func (*batchNormLayer[T]) Type() string { return "BatchNorm" }

// Counts returns one bottom and one top.
func (*batchNormLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// bnChannelsOf is the channel count of a bottom: axis 1, or 1 for a bottom of
// one axis.
func bnChannelsOf[T layer.Float](b *blob.Blob[T]) (int, error) {
	switch b.NumAxes() {
	case 0:
		return 0, fmt.Errorf("bottom %s has no axes; BatchNorm needs at least one (batch, channels, ...)", b.ShapeString())
	case 1:
		return 1, nil
	}
	return b.Shape()[1], nil
}

// LayerSetUp reads the channel count and creates the statistics (zero)
// unless they came with the model.
func (l *batchNormLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	var err error
	if l.channels, err = bnChannelsOf(bottom[0]); err != nil {
		return err
	}
	if len(l.Blobs()) > 0 {
		if err := l.CheckParamShapes([]string{"mean", "variance", "scale factor"}, []int{l.channels}, []int{l.channels}, []int{1}); err != nil {
			return err
		}
	} else {
		for _, shape := range []int{l.channels, l.channels, 1} {
			b, err := l.NewBlob(shape) // zero filled
			if err != nil {
				return err
			}
			l.AddBlob(b)
		}
	}
	for _, b := range []**blob.Blob[T]{&l.mean, &l.variance, &l.temp, &l.xNorm, &l.numByChans} {
		if *b, err = l.NewBlob(); err != nil {
			return err
		}
	}
	return nil
}

// Reshape sizes the top and the buffers for the bottom.
func (l *batchNormLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	x := bottom[0]
	c, err := bnChannelsOf(x)
	if err != nil {
		return err
	}
	if c != l.channels {
		return fmt.Errorf("bottom %s has %d channels, the layer was set up for %d", x.ShapeString(), c, l.channels)
	}
	if err := top[0].ReshapeLike(x); err != nil {
		return err
	}
	l.num = x.Shape()[0]
	l.spatial = 0
	if l.num > 0 && c > 0 {
		l.spatial = x.Count() / (l.num * c)
	}
	for _, r := range []struct {
		b     *blob.Blob[T]
		shape []int
	}{{l.mean, []int{c}}, {l.variance, []int{c}}, {l.temp, x.Shape()}, {l.xNorm, x.Shape()}, {l.numByChans, []int{l.num * c}}} {
		if err := r.b.Reshape(r.shape); err != nil {
			return err
		}
	}
	if err := kit.Ones(l, &l.batchOnes, l.num); err != nil {
		return err
	}
	return kit.Ones(l, &l.spatialOne, l.spatial)
}

// ForwardCPU normalises on the host.
func (l *batchNormLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if bottom[0].Count() == 0 {
		return nil
	}
	if l.fused.bn != nil {
		l.fused.decide(l)
		if l.fused.active() {
			l.fused.forward(l, bottom, top)
			return nil
		}
	}
	l.host.forward(l, bottom, top)
	return nil
}

// BackwardCPU computes the bottom's gradient on the host.
func (l *batchNormLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if l.fused.bn != nil && l.fused.active() {
		if bottom[0].Count() > 0 {
			l.fused.backward(l, top, propagateDown, bottom)
		}
		return nil
	}
	if !propagateDown[0] {
		return nil
	}
	if !l.useGlobal && bottom[0].Count() > 0 && !l.genericBackward {
		l.hostBack.backward(l, top, bottom)
		return nil
	}
	return batchNormBackward[T](l, device.Host[T](l.Context()), top, bottom, l.host.divideByStd(l))
}

// bnChannelSum sets dst[c] = alpha * the sum of src (N x C x spatial) over
// channel c's batch and spatial elements.
func bnChannelSum[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], src A, alpha T, dst A) {
	nbc := d.MutableData(l.numByChans)
	d.Gemv(blas.NoTrans, l.num*l.channels, l.spatial, alpha, src, d.Data(l.spatialOne), 0, nbc)
	d.Gemv(blas.Trans, l.num, l.channels, 1, nbc, d.Data(l.batchOnes), 0, dst)
}

// bnChannelBroadcast sets dst = alpha * v[c] (broadcast over the batch and
// spatial axes) + beta * dst.
func bnChannelBroadcast[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], v A, alpha, beta T, dst A) {
	nbc := d.MutableData(l.numByChans)
	d.Gemm(blas.NoTrans, blas.NoTrans, l.num, l.channels, 1, 1, d.Data(l.batchOnes), v, 0, nbc)
	d.Gemm(blas.NoTrans, blas.NoTrans, l.num*l.channels, l.spatial, 1, alpha, nbc, d.Data(l.spatialOne), beta, dst)
}

func batchNormForward[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	n := bottom[0].Count()
	if n == 0 {
		return nil
	}
	x := d.Data(bottom[0])
	y := d.MutableData(top[0])
	d.Copy(n, x, y)
	mean, variance := d.MutableData(l.mean), d.MutableData(l.variance)
	if l.useGlobal {
		// The scale factor is one number; read it on the host.
		var f T
		if s := l.Blobs()[2].CPUData()[0]; s != 0 {
			f = 1 / s
		}
		d.Scale(l.channels, f, d.Data(l.Blobs()[0]), mean)
		d.Scale(l.channels, f, d.Data(l.Blobs()[1]), variance)
	} else {
		bnChannelSum(l, d, y, 1/T(l.num*l.spatial), mean)
	}
	bnChannelBroadcast(l, d, mean, -1, 1, y) // y = x - mean
	temp := d.MutableData(l.temp)
	if !l.useGlobal {
		d.Sqr(n, y, temp)
		bnChannelSum(l, d, temp, 1/T(l.num*l.spatial), variance)
		bnUpdateStatistics(l, d, n, mean, variance)
	}
	d.AddScalar(l.channels, l.eps, variance)
	d.Sqrt(l.channels, variance, variance)
	bnChannelBroadcast(l, d, variance, 1, 0, temp)
	d.Div(n, y, temp, y)
	d.Copy(n, y, d.MutableData(l.xNorm))
	return d.Err()
}

// bnUpdateStatistics folds the batch's mean and variance into the running
// sums, with Bessel's correction m/(m-1) on the variance. The scale factor
// is updated on the device, so training never copies it to the host.
func bnUpdateStatistics[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], n int, mean, variance A) {
	s := d.MutableData(l.Blobs()[2])
	d.Scal(1, l.maf, s)
	d.AddScalar(1, 1, s)
	d.Axpby(l.channels, 1, mean, l.maf, d.MutableData(l.Blobs()[0]))
	m := n / l.channels
	correction := T(1)
	if m > 1 {
		correction = T(m) / T(m-1)
	}
	d.Axpby(l.channels, correction, variance, l.maf, d.MutableData(l.Blobs()[1]))
}

// batchNormBackward computes dx = dy / std with global statistics, else
// dx = (dy - mean(dy) - y * mean(dy . y)) / std with the means per channel
// over the batch and spatial axes (y the normalised output).
//
// divStd, when not nil, sets dst = src / std from the per-channel
// deviations (the host's, which then leaves temp to the forward pass);
// nil divides by temp, the deviations broadcast by the forward pass.
func batchNormBackward[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], top, bottom []*blob.Blob[T], divStd func(src, dst A)) error {
	n := bottom[0].Count()
	if n == 0 {
		return nil
	}
	dy := d.Diff(top[0])
	if bottom[0] == top[0] {
		// dx is about to overwrite dy: keep a copy.
		d.Copy(n, dy, d.MutableDiff(l.xNorm))
		dy = d.Diff(l.xNorm)
	}
	dx := d.MutableDiff(bottom[0])
	if l.useGlobal {
		bnDivStd(l, d, divStd, dy, dx)
		return d.Err()
	}
	y := d.Data(l.xNorm)
	sum := d.MutableData(l.mean) // the forward's statistics are spent
	d.Mul(n, y, dy, dx)
	bnChannelSum(l, d, dx, 1, sum)
	bnChannelBroadcast(l, d, sum, 1, 0, dx)
	d.Mul(n, y, dx, dx) // sum(dy . y) . y
	bnChannelSum(l, d, dy, 1, sum)
	bnChannelBroadcast(l, d, sum, 1, 1, dx) // + sum(dy)
	d.Axpby(n, 1, dy, -1/T(l.num*l.spatial), dx)
	bnDivStd(l, d, divStd, dx, dx)
	return d.Err()
}

// bnDivStd sets dst = src / std, through divStd when not nil, else by
// temp's broadcast deviations.
func bnDivStd[T layer.Float, A any](l *batchNormLayer[T], d device.View[T, A], divStd func(src, dst A), src, dst A) {
	if divStd != nil {
		divStd(src, dst)
		return
	}
	d.Div(l.temp.Count(), src, d.Data(l.temp), dst)
}

// Buffers lists, for a host net's memory plan, what the host passes keep:
// temp is the forward pass's scratch (the host's backward pass divides by
// the per-channel deviations instead), xNorm's data (the normalised
// output) goes from the forward pass to the backward pass (a copy of
// the top after the forward pass, which the backward pass leaves
// unchanged), and in place xNorm's diff
// holds a copy of the top's diff during the backward pass only.
func (l *batchNormLayer[T]) Buffers(bottom, top []*blob.Blob[T]) []layer.Buffer[T] {
	xNorm := layer.Buffer[T]{Name: "xNorm", Blob: l.xNorm, Data: layer.BufferSaved, Copy: layer.CopyOfTopAfter}
	if bottom[0] == top[0] {
		xNorm.Diff = layer.BufferBackwardScratch
	}
	return []layer.Buffer[T]{{Name: "temp", Blob: l.temp, Data: layer.BufferForwardScratch}, xNorm}
}
