package normalization_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/settings"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// bnKernelCases reach every path of the own BatchNorm kernels: rows read
// 16 bytes at a time (spatial 64 in float32, 30 in float64) and one value
// at a time (30 and 1 in float32, odd sizes), one value per channel
// (N x C), five axes, rows longer than a warp's four loads, and a mean
// far from zero with a small spread, where a one-pass sum of squares
// would cancel.
var bnKernelCases = []layertest.Parity{
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{4, 3, 5, 6}}, Tol: 1e-3, Repeat: 3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{2, 3, 8, 8}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { moving_average_fraction: 0.9 eps: 0.001 }`, Bottom: [][]int{{6, 5}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{2, 4, 3, 2, 5}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{3, 2, 37, 41}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{2, 2, 64, 64}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { eps: 1e-9 }`, Bottom: [][]int{{2, 3, 16, 16}}, Lo: 999, Hi: 1001, Tol: 2e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: true }`, Bottom: [][]int{{4, 3, 5, 6}}, Tol: 1e-3},
	// A block per channel (at least 128 channels of at most 16384
	// values), with 1, 8, 16 and 32 values a thread (the backward pass up
	// to 8; the row kernels above that).
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{4, 128, 3, 5}}, Tol: 1e-3, Repeat: 3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{3, 130, 37, 41}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b"`, Bottom: [][]int{{64, 128, 14, 14}}, Tol: 1e-3},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { eps: 1e-9 }`, Bottom: [][]int{{64, 128, 7, 7}}, Lo: 999, Hi: 1001, Tol: 2e-3},
}

// BatchNorm's cuDNN engine on its own kernels (the default), on their
// row kernels alone (the BatchNorm setting rows, GOCAFFE_BN=rows) and on
// cuDNN's (cudnn) against the CPU, float32 and float64: outputs, running
// sums over three passes, and gradients.
func TestBatchNormKernelsMatchCPU(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	for _, mode := range []settings.BatchNorm{settings.BatchNormOwn, settings.BatchNormRows, settings.BatchNormCuDNN} {
		ctx.SetSettings(settings.Settings{BatchNorm: mode})
		for i, c := range bnKernelCases {
			text, _ := layertest.WithEngine(t, c.Layer, layer.EngineCuDNN)
			c.Layer, c.Context = text, ctx
			name := fmt.Sprintf("%s/%d_%v", mode, i, c.Bottom[0])
			t.Run(name+"/float32", func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
			c.Tol = 0
			t.Run(name+"/float64", func(t *testing.T) { layertest.CheckGPUParity[float64](t, c) })
		}
	}
}

// With global statistics from running sums whose scale factor is not
// one, the own kernels divide the sums by it as Caffe does, in place or
// not.
func TestBatchNormKernelsGlobalStats(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	text, _ := layertest.WithEngine(t, `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: true }`, layer.EngineCuDNN)
	for _, inPlace := range []bool{false, true} {
		var got, want [2][]float32 // top data, bottom diff
		for side, c := range []*device.Context{nil, ctx} {
			l := layertest.New[float32](t, text)
			x := layertest.Blob[float32](t, 4, 3, 6, 6)
			layertest.FillGaussian(x, 2, 3, 5)
			y := layertest.Blob[float32](t)
			if inPlace {
				y = x
			}
			if c != nil {
				l.LayerBase().SetContext(c)
				x.SetDevice(c.Device())
				y.SetDevice(c.Device())
			}
			layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			b := l.LayerBase().Blobs()
			for j := range 3 {
				b[0].MutableCPUData()[j] = 4 * float32(j-1)
				b[1].MutableCPUData()[j] = 2 + 3*float32(j)
			}
			b[2].MutableCPUData()[0] = 4
			layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			out := append([]float32(nil), y.CPUData()...)
			for j := range y.Count() {
				y.MutableCPUDiff()[j] = float32(j%11) - 5
			}
			layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
			r := [2][]float32{out, append([]float32(nil), x.CPUDiff()...)}
			if side == 0 {
				want = r
			} else {
				got = r
			}
		}
		layertest.CheckClose(t, fmt.Sprintf("in place %v: top", inPlace), got[0], want[0], 1e-5)
		layertest.CheckClose(t, fmt.Sprintf("in place %v: bottom diff", inPlace), got[1], want[1], 1e-5)
	}
}

// An unknown GOCAFFE_BN is an error that names the variable; a BatchNorm
// setting with no word, an error naming the setting at set-up.
func TestBatchNormKernelModeError(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	if _, err := settings.FromLookup(func(name string) (string, bool) { return "fast", name == "GOCAFFE_BN" }); err == nil || !strings.Contains(err.Error(), "GOCAFFE_BN") {
		t.Errorf("GOCAFFE_BN=fast: error %v, want one naming the variable", err)
	}
	ctx.SetSettings(settings.Settings{BatchNorm: 9})
	text, _ := layertest.WithEngine(t, `type: "BatchNorm" bottom: "a" top: "b"`, layer.EngineCuDNN)
	l := layertest.New[float32](t, text)
	l.LayerBase().SetContext(ctx)
	x := layertest.Blob[float32](t, 2, 3, 4, 4)
	x.SetDevice(ctx.Device())
	if err := layer.SetUp(l, []*blob.Blob[float32]{x}, layertest.Blobs[float32](t, 1)); err == nil || !strings.Contains(err.Error(), "BatchNorm setting") {
		t.Errorf("BatchNorm setting 9: error %v, want one naming the setting", err)
	}
}
