package normalization

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/settings"
)

// bnKernelMode reads the BatchNorm setting (GOCAFFE_BN) of ctx: own
// computes BatchNorm's cuDNN engine on gocaffe's kernels (batch_norm.cu),
// rows on their row kernels alone (no block per channel), cudnn on
// cuDNN's batch normalization. On the H100 cuDNN's kernels took 3-7 times
// what the data they move takes at memory speed (ResNet-50's first one:
// 1.17 ms backward for 103 MB); gocaffe's read each array once or twice.
func bnKernelMode(ctx *device.Context) (own, blocks bool, err error) {
	switch m := ctx.Settings().BatchNorm; m {
	case settings.BatchNormOwn:
		return true, true, nil
	case settings.BatchNormRows:
		return true, false, nil
	case settings.BatchNormCuDNN:
		return false, false, nil
	default:
		return false, false, fmt.Errorf("BatchNorm setting %v: want own, rows or cudnn", m)
	}
}

// bnBlockThreads is the block size of the kernels that give each channel
// a block (BN_BLOCK_THREADS), bnBlockK the values per thread they are
// compiled for: up to bnBlockThreads*32 values a channel.
const bnBlockThreads = 512

var bnBlockK = [...]int{1, 2, 4, 8, 16, 32}

// bnBlockBackwardMaxK is the most values per thread the backward kernel is
// used with: it holds two arrays, and with 32 values of each (ResNet-50's
// 14x14 layers, batch 64) it took 0.183 ms on the H100 where the row
// kernels take 0.105; with 8 (7x7) it took 0.062 against 0.142.
const bnBlockBackwardMaxK = 8

// bnBlockMinChannels is the fewest channels for which a block per channel
// keeps the GPU busy (the H100 has 132 multiprocessors); below it the row
// kernels, a warp per image and channel, spread the work wider.
const bnBlockMinChannels = 128

// bnWarpThreads is the block size of the row kernels, which give each
// row (an image's values in one channel) a warp of 32 threads.
const bnWarpThreads = 256

// bnScratch is the own kernels' memory: per row (num x channels) two
// values, and per channel five: the mean and 1/std the forward pass
// saves for the backward pass, and dx's three coefficients.
type bnScratch[T layer.Float] struct {
	perRow, perChannel *blob.Blob[T]
	blocks             bool // the block-per-channel kernels may be used
	// chunks and chunkLen: how the channels-last kernels split the
	// positions (bnChannelsLastChunks); perRow holds two values per chunk
	// and channel then.
	chunks, chunkLen int
}

func (s *bnScratch[T]) init(l *batchNormLayer[T]) error {
	var err error
	if s.perRow, err = l.NewBlob(); err != nil {
		return err
	}
	s.perChannel, err = l.NewBlob()
	return err
}

// reshape sizes the scratch for num images of channels channels and
// spatial positions, read channels-last if channelsLast.
func (s *bnScratch[T]) reshape(num, channels, spatial int, channelsLast bool) error {
	rows := num
	if channelsLast {
		s.chunks, s.chunkLen = bnChannelsLastChunks(num*spatial, channels)
		rows = s.chunks
	}
	if err := s.perRow.Reshape([]int{2, rows * channels}); err != nil {
		return err
	}
	return s.perChannel.Reshape([]int{5, channels})
}

// bnClThreads and bnClVector are BN_CL_THREADS and BN_CL_V: a
// channels-last block's threads, and the channels each thread reads at a
// time.
const (
	bnClThreads = 256
	bnClVector  = 8
)

// bnChannelsLastChunks splits the positions of a channels-last pass into
// equal chunks, one block's each (per 2048 channels): about 1024 blocks in
// all, so that an H100's 132 multiprocessors stay busy, and at least 16
// positions a chunk, so that the per-chunk sums (two floats per channel)
// stay a fraction of the data (two bytes per value). The chunk length is
// the least divisor of positions from there: bn_channel_stats and
// bn_channel_grad merge chunks of equal length.
func bnChannelsLastChunks(positions, channels int) (chunks, length int) {
	columns := max(1, (channels/bnClVector+bnClThreads-1)/bnClThreads)
	target := max(16, (positions*columns+1023)/1024)
	for l := target; l < positions; l++ {
		if positions%l == 0 {
			return positions / l, l
		}
	}
	return 1, max(positions, 1)
}

// launchChunks runs a channels-last kernel of batch_norm.cu: a block per
// chunk and up to 2048 channels.
func launchChunks[T layer.Float](l *batchNormLayer[T], name string, chunks int, a *cuda.Args) error {
	f, err := kernel[T](l.Context(), "batch_norm.cu", name)
	if err != nil {
		return err
	}
	columns := (l.channels/bnClVector + bnClThreads - 1) / bnClThreads
	return f.Launch(cuda.Dim3{X: chunks, Y: columns}, cuda.Dim3{X: bnClThreads}, 0, nil, a)
}

// launchWarps runs a kernel of batch_norm.cu that gives each of n rows
// (or channels) a warp.
func launchWarps[T layer.Float](l *batchNormLayer[T], name string, n int, a *cuda.Args) error {
	f, err := kernel[T](l.Context(), "batch_norm.cu", name)
	if err != nil {
		return err
	}
	perBlock := bnWarpThreads / 32
	blocks := min((n+perBlock-1)/perBlock, 1<<20)
	return f.Launch(cuda.Dim3{X: blocks}, cuda.Dim3{X: bnWarpThreads}, 0, nil, a)
}

// launchRows runs a row kernel of batch_norm.cu: a warp per row.
func launchRows[T layer.Float](l *batchNormLayer[T], name string, a *cuda.Args) error {
	return launchWarps(l, name, l.num*l.channels, a)
}

// fusedArgs appends what the kernels take of the fused layers: the
// Scale's gamma and beta (0: one and zero), whether to apply a ReLU and
// its slope.
func (e *batchNormDNN[T]) fusedArgs(g *device.GPUView[T], a *cuda.Args) {
	var gamma, beta cuda.DevicePtr
	if s := e.fusedScale(); s != nil {
		gamma = g.Data(s.Blobs()[0])
		if s.biasIndex >= 0 {
			beta = g.Data(s.Blobs()[s.biasIndex])
		}
	}
	a.Ptr(gamma).Ptr(beta)
	var slope T
	if e.fusedReLU() != nil {
		a.Int(1)
		slope = e.reluSlope
	} else {
		a.Int(0)
	}
	kit.ScalarArg(a, slope)
}

// blockK returns the values per thread of the block-per-channel kernels
// for this pass, or 0 where the row kernels compute it: global
// statistics, few channels, or channels of too many values.
func (e *batchNormDNN[T]) blockK(backward bool) int {
	l := e.l
	if !e.own.blocks || l.useGlobal || l.channels < bnBlockMinChannels || e.red.ChannelsLast() {
		return 0
	}
	m := l.num * l.spatial
	for _, k := range bnBlockK {
		if m <= k*bnBlockThreads {
			if backward && k > bnBlockBackwardMaxK {
				return 0
			}
			return k
		}
	}
	return 0
}

// launchChannelBlocks runs kernel name_k<K><suffix> of batch_norm.cu with
// a block per channel (suffix: rowKernel's).
func launchChannelBlocks[T layer.Float](l *batchNormLayer[T], name string, k int, suffix string, a *cuda.Args) error {
	f, err := kernel[T](l.Context(), "batch_norm.cu", fmt.Sprintf("%s_k%d%s", name, k, suffix))
	if err != nil {
		return err
	}
	return f.Launch(cuda.Dim3{X: l.channels}, cuda.Dim3{X: bnBlockThreads}, 0, nil, a)
}

// suffix names the kernels that read and write the activations in the
// engine's storage: "" for T, "_f16" or "_bf16" when it computes in 16
// bits (the per-channel kernels are T's either way).
func (e *batchNormDNN[T]) suffix() string {
	if e.red.On() {
		return e.red.Suffix()
	}
	return ""
}

// runningSums returns the device arrays of the scale factor and the
// running mean and variance, for the batch's statistics to be folded in.
func (e *batchNormDNN[T]) runningSums(g *device.GPUView[T]) (factor, mean, variance cuda.DevicePtr) {
	b := e.l.Blobs()
	return g.MutableData(b[2]), g.MutableData(b[0]), g.MutableData(b[1])
}

// forwardOwn sets y = (x - mean)/std * gamma + beta per channel, then the
// fused ReLU, with the batch's statistics, folded into the running sums,
// or with the running sums.
func (e *batchNormDNN[T]) forwardOwn(g *device.GPUView[T], x, y cuda.DevicePtr) error {
	l := e.l
	c, rows := l.channels, l.num*l.channels
	pr, pc := g.MutableData(e.own.perRow), g.MutableData(e.own.perChannel)
	mean, invStd := pc, g.Offset(pc, c)
	if err := g.Err(); err != nil {
		return err
	}
	m, corr := l.num*l.spatial, T(1)
	if m > 1 {
		corr = T(m) / T(m-1)
	}
	var a cuda.Args
	if k := e.blockK(false); k > 0 {
		factor, runMean, runVar := e.runningSums(g)
		a.Int(l.num).Int(c).Int(l.spatial).Ptr(x)
		kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, l.eps), l.maf), corr)
		a.Ptr(mean).Ptr(invStd).Ptr(factor).Ptr(runMean).Ptr(runVar)
		e.fusedArgs(g, &a)
		a.Ptr(y)
		if err := g.Err(); err != nil {
			return err
		}
		return launchChannelBlocks(l, "bn_block_forward", k, e.suffix(), &a)
	}
	if l.useGlobal {
		// The running sums are only read here (runningSums takes them to
		// write).
		factor, runMean, runVar := g.Data(l.Blobs()[2]), g.Data(l.Blobs()[0]), g.Data(l.Blobs()[1])
		kit.ScalarArg(a.Int(c), l.eps).Ptr(factor).Ptr(runMean).Ptr(runVar).Ptr(mean).Ptr(invStd)
		if err := g.Err(); err != nil {
			return err
		}
		if err := launch[T](l.Context(), "batch_norm.cu", "bn_global_stats", c, &a); err != nil {
			return err
		}
	} else {
		num, s := l.num, l.spatial // the rows bn_channel_stats merges, and their length
		if e.red.ChannelsLast() {
			num, s = e.own.chunks, e.own.chunkLen
			rows = num * c
			a.Int(s).Int(c).Ptr(x).Ptr(pr).Ptr(g.Offset(pr, rows))
			if err := launchChunks(l, "bn_cl_stats"+e.suffix(), num, &a); err != nil {
				return err
			}
		} else {
			a.Int(rows).Int(l.spatial).Ptr(x).Ptr(pr).Ptr(g.Offset(pr, rows))
			if err := launchRows(l, "bn_row_stats"+e.suffix(), &a); err != nil {
				return err
			}
		}
		factor, runMean, runVar := e.runningSums(g)
		a = cuda.Args{}
		a.Int(num).Int(c).Int(s).Ptr(pr).Ptr(g.Offset(pr, rows))
		kit.ScalarArg(kit.ScalarArg(kit.ScalarArg(&a, l.eps), l.maf), corr)
		a.Ptr(mean).Ptr(invStd).Ptr(factor).Ptr(runMean).Ptr(runVar)
		if err := g.Err(); err != nil {
			return err
		}
		if err := launchWarps(l, "bn_channel_stats", c, &a); err != nil {
			return err
		}
	}
	a = cuda.Args{}
	if e.red.ChannelsLast() {
		a.Int(e.own.chunkLen).Int(c).Ptr(x).Ptr(mean).Ptr(invStd)
		e.fusedArgs(g, &a)
		a.Ptr(y)
		if err := g.Err(); err != nil {
			return err
		}
		return launchChunks(l, "bn_cl_apply"+e.suffix(), e.own.chunks, &a)
	}
	a.Int(l.num * c).Int(c).Int(l.spatial).Ptr(x).Ptr(mean).Ptr(invStd)
	e.fusedArgs(g, &a)
	a.Ptr(y)
	if err := g.Err(); err != nil {
		return err
	}
	return launchRows(l, "bn_apply"+e.suffix(), &a)
}

// gradOwn adds the fused Scale's gradients to dGamma and dBeta (each
// may be 0: not wanted) and, if dx is not 0, sets dx from dy (dx may be
// dy's memory) and x, through the fused ReLU's gradient.
func (e *batchNormDNN[T]) gradOwn(g *device.GPUView[T], dy, x, dx, dGamma, dBeta cuda.DevicePtr) error {
	l := e.l
	c, rows := l.channels, l.num*l.channels
	pr, pc := g.MutableData(e.own.perRow), g.MutableData(e.own.perChannel)
	mean, invStd, coef := pc, g.Offset(pc, c), g.Offset(pc, 2*c)
	if err := g.Err(); err != nil {
		return err
	}
	if k := e.blockK(true); k > 0 {
		var a cuda.Args
		a.Int(l.num).Int(c).Int(l.spatial).Ptr(dy).Ptr(x).Ptr(mean).Ptr(invStd)
		e.fusedArgs(g, &a)
		a.Ptr(dGamma).Ptr(dBeta).Ptr(dx)
		if err := g.Err(); err != nil {
			return err
		}
		return launchChannelBlocks(l, "bn_block_backward", k, e.suffix(), &a)
	}
	// With global statistics dx needs no sums over the batch; only a
	// fused Scale's gradients do.
	sums := !l.useGlobal || dGamma != 0 || dBeta != 0
	num, s := l.num, l.spatial // the rows bn_channel_grad adds, and their length
	cl := e.red.ChannelsLast()
	if cl {
		num, s = e.own.chunks, e.own.chunkLen
		rows = num * c
	}
	if sums {
		var a cuda.Args
		if cl {
			a.Int(s).Int(c)
		} else {
			a.Int(rows).Int(c).Int(l.spatial)
		}
		a.Ptr(dy).Ptr(x).Ptr(mean).Ptr(invStd)
		e.fusedArgs(g, &a)
		a.Ptr(pr).Ptr(g.Offset(pr, rows))
		if err := g.Err(); err != nil {
			return err
		}
		var err error
		if cl {
			err = launchChunks(l, "bn_cl_grad_sums"+e.suffix(), num, &a)
		} else {
			err = launchRows(l, "bn_row_grad_sums"+e.suffix(), &a)
		}
		if err != nil {
			return err
		}
	}
	global := 0
	if !sums {
		num = 0 // no rows to add
	}
	if l.useGlobal {
		global = 1
	}
	var a cuda.Args
	a.Int(num).Int(c).Int(s).Int(global).Ptr(pr).Ptr(g.Offset(pr, rows)).Ptr(invStd)
	var gamma cuda.DevicePtr
	if s := e.fusedScale(); s != nil {
		gamma = g.Data(s.Blobs()[0])
	}
	a.Ptr(gamma).Ptr(dGamma).Ptr(dBeta).Ptr(coef)
	if err := g.Err(); err != nil {
		return err
	}
	if err := launchWarps(l, "bn_channel_grad", c, &a); err != nil {
		return err
	}
	if dx == 0 {
		return nil
	}
	a = cuda.Args{}
	if cl {
		a.Int(e.own.chunkLen).Int(c).Ptr(dy).Ptr(x).Ptr(mean).Ptr(invStd)
		e.fusedArgs(g, &a)
		a.Ptr(coef).Ptr(dx)
		if err := g.Err(); err != nil {
			return err
		}
		return launchChunks(l, "bn_cl_grad_apply"+e.suffix(), e.own.chunks, &a)
	}
	a.Int(l.num * c).Int(c).Int(l.spatial).Ptr(dy).Ptr(x).Ptr(mean).Ptr(invStd)
	e.fusedArgs(g, &a)
	a.Ptr(coef).Ptr(dx)
	if err := g.Err(); err != nil {
		return err
	}
	return launchRows(l, "bn_grad_apply"+e.suffix(), &a)
}
