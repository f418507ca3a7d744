package all_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// reducedCases are the layers with a 16-bit path (layer.ReducedEngine), in
// shapes that reach its corners: strides, pads, groups, several bottoms,
// a transposed inner product, leaky ReLU on gocaffe's own kernels, ReLU
// and the other activations on cuDNN.
var reducedCases = []layertest.Parity{
	{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2
		weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 17, 13}}},
	{Layer: `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d" convolution_param { num_output: 5 kernel_size: 1
		weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 5, 7}, {2, 3, 5, 7}}},
	{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 8 kernel_size: 5 bias_term: false
		weight_filler { type: "xavier" } }`, Bottom: [][]int{{4, 1, 12, 12}}},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: MAX kernel_size: 2 stride: 2 }`, Bottom: [][]int{{2, 3, 8, 10}}},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 }`, Bottom: [][]int{{2, 3, 11, 9}}},
	{Layer: `type: "InnerProduct" bottom: "a" top: "y" inner_product_param { num_output: 7
		weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{5, 3, 4, 2}}},
	{Layer: `type: "InnerProduct" bottom: "a" top: "y" inner_product_param { num_output: 6 transpose: true
		weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{4, 9}}},
	{Layer: `type: "ReLU" bottom: "a" top: "r" relu_param { engine: CAFFE }`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "ReLU" bottom: "a" top: "r" relu_param { negative_slope: 0.1 }`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "ReLU" bottom: "a" top: "r" relu_param { negative_slope: 0.1 }`, Bottom: [][]int{{3, 5, 7, 9}}}, // 8-value vectors and a tail
	{Layer: `type: "ReLU" bottom: "a" top: "r" relu_param { engine: CUDNN }`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "Sigmoid" bottom: "a" top: "s" sigmoid_param { engine: CUDNN }`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "TanH" bottom: "a" top: "s" tanh_param { engine: CUDNN }`, Bottom: [][]int{{4, 3, 5, 6}}},
	{Layer: `type: "LRN" bottom: "a" top: "n" lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }`, Bottom: [][]int{{2, 7, 5, 4}}},
	// A window that matters (alpha 2) and channels beyond both its edges,
	// for the 16-bit kernels' running sums.
	{Layer: `type: "LRN" bottom: "a" top: "n" lrn_param { local_size: 3 alpha: 2 beta: 0.75 k: 2 }`, Bottom: [][]int{{2, 20, 3, 5}}},
	{Layer: `type: "Dropout" bottom: "a" top: "d" phase: TEST dropout_param { dropout_ratio: 0.3 }`, Bottom: [][]int{{2, 3, 8, 5}}},
	// Caffe's rounded-up output (ResNet's pool1), on the CAFFE engine's
	// byte argmax.
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: MAX kernel_size: 3 stride: 2 }`, Bottom: [][]int{{2, 3, 12, 9}}, Fill: distinctInWindows},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 }`, Bottom: [][]int{{2, 3, 11, 10}}, Fill: distinctInWindows},
	// MAX's gradient by tiles (offset_pool_tiles) over gaps between
	// windows and rows past the last.
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: MAX kernel_size: 2 stride: 3 round_mode: FLOOR }`, Bottom: [][]int{{2, 3, 12, 10}}, Fill: distinctInWindows},
	{Layer: `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: MAX kernel_size: 5 stride: 2 pad: 2 }`, Bottom: [][]int{{2, 3, 11, 10}}, Fill: distinctInWindows},
	// BatchNorm on the own kernels: the row kernels (few channels) and
	// the block kernels (128 channels or more), training and global
	// statistics.
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: false }`, Bottom: [][]int{{3, 5, 6, 7}}},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: false }`, Bottom: [][]int{{2, 130, 3, 5}}},
	// Rows of 196 values: 16-bit values read four at a time (not eight).
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: false }`, Bottom: [][]int{{2, 6, 14, 14}}},
	{Layer: `type: "BatchNorm" bottom: "a" top: "b" batch_norm_param { use_global_stats: true }`, Bottom: [][]int{{2, 6, 14, 14}}},
	{Layer: `type: "Scale" bottom: "a" top: "s" scale_param { bias_term: true filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 5, 6}}},
	{Layer: `type: "Scale" bottom: "a" top: "s" scale_param { filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 5, 6}}},
	{Layer: `type: "Eltwise" bottom: "a" bottom: "b" top: "s"`, Bottom: [][]int{{3, 4, 5, 6}, {3, 4, 5, 6}}},
	{Layer: `type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "s" eltwise_param { coeff: 0.5 coeff: -1 coeff: 2 }`, Bottom: [][]int{{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}},
	{Layer: `type: "Split" bottom: "a" top: "b" top: "c" top: "d"`, Bottom: [][]int{{2, 3, 4, 5}}},
	{Layer: `type: "Concat" bottom: "a" bottom: "b" bottom: "c" top: "d"`, Bottom: [][]int{{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 4, 4, 5}}},
	// 105 values: eight at a time, then a tail of one.
	{Layer: `type: "Eltwise" bottom: "a" bottom: "b" top: "s" eltwise_param { coeff: 1 coeff: -0.5 }`, Bottom: [][]int{{3, 5, 7}, {3, 5, 7}}},
}

// distinctInWindows fills a bottom with values that stay apart when
// rounded to 16 bits (steps of 1/101, more than BFLOAT16's spacing below
// 1), and that repeat only 101 elements apart, farther than any window of
// the pooling cases reaches: the maximum of each window is then the same
// one in FP32 and in 16 bits, and so is the gradient's route.
func distinctInWindows(_ int, vals []float64) {
	for j := range vals {
		vals[j] = float64((j*37)%101)/101 - 0.5
	}
}

// The tolerances of the 16-bit paths against FP32 on the host, relative
// to max(1, |value|): inputs, weights and outputs are each rounded once
// (FLOAT16 keeps 11 significant bits, BFLOAT16 8) and the products sum in
// FP32, so a value of a sum of k products is off by about sqrt(k) units
// of the last place of its terms. docs/precision.md quotes these.
const (
	float16Tol  = 1e-2
	bfloat16Tol = 6e-2
)

// Every 16-bit path against the FP32 host layer, forward and gradients, in
// FLOAT16 and BFLOAT16, with the blobs stored in 16 bits and with FP32
// blobs converted at the layer's edges.
func TestReducedPrecisionLayers(t *testing.T) {
	for _, c := range reducedCases {
		layertest.New[float32](t, c.Layer) // the texts parse, and make layers, here too
	}
	ctx := layertest.NeedDNN(t)
	for _, c := range reducedCases {
		name := layertest.Param(t, c.Layer).GetType()
		for _, s := range []syncedmem.Storage{syncedmem.StorageFloat16, syncedmem.StorageBFloat16} {
			for _, stored := range []bool{true, false} {
				c := c
				c.Context, c.Reduced, c.StoreReduced = ctx, s, stored
				c.Tol = float16Tol
				if s == syncedmem.StorageBFloat16 {
					c.Tol = bfloat16Tol
				}
				where := "/edges"
				if stored {
					where = "/stored"
				}
				t.Run(name+"/"+s.String()+where, func(t *testing.T) { layertest.CheckGPUParity[float32](t, c) })
			}
		}
	}
}

// A pooling whose output Caffe rounds up where cuDNN rounds down has no
// 16-bit path: SetReduced says so, and a net keeps the layer in FP32.
func TestReducedPoolingRefusesCeilShapes(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	l := layertest.New[float32](t, `type: "Pooling" bottom: "a" top: "p" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 }`)
	l.LayerBase().SetContext(ctx)
	bottom := layertest.Blob[float32](t, 2, 3, 10, 8)
	bottom.SetDevice(ctx.Device())
	top := layertest.Blobs[float32](t, 1)
	top[0].SetDevice(ctx.Device())
	layertest.SetUp(t, l, []*blob.Blob[float32]{bottom}, top)
	err := layer.SetReduced(l, syncedmem.StorageBFloat16)
	if err == nil || !strings.Contains(err.Error(), "Caffe's output of 6x5 rounds up where cuDNN's rounds down") {
		t.Errorf("SetReduced on a ceil-rounded pooling: %v", err)
	}
}

// Dropout in TRAIN draws its mask as the FP32 GPU pass does (the same
// generator), so in 16 bits it keeps and scales the same elements.
func TestReducedDropoutTrain(t *testing.T) {
	ctx := layertest.NeedDNN(t)
	for _, st := range []syncedmem.Storage{syncedmem.StorageFloat16, syncedmem.StorageBFloat16} {
		var ys, dxs [2][]float32
		for k, reduced := range []bool{false, true} {
			l := layertest.New[float32](t, `type: "Dropout" dropout_param { dropout_ratio: 0.4 }`)
			l.LayerBase().SetContext(ctx)
			l.LayerBase().SetRNG(mathfn.NewRNG(3))
			bottom := layertest.Blob[float32](t, 4, 1000)
			bottom.SetDevice(ctx.Device())
			mathfn.RngUniform(bottom.Count(), -1, 1, bottom.MutableCPUData(), mathfn.NewRNG(4))
			top := layertest.Blobs[float32](t, 1)
			top[0].SetDevice(ctx.Device())
			layertest.SetUp(t, l, []*blob.Blob[float32]{bottom}, top)
			if reduced {
				if err := layer.SetReduced(l, st); err != nil {
					t.Fatal(err)
				}
			}
			layertest.Forward(t, l, []*blob.Blob[float32]{bottom}, top)
			mathfn.RngUniform(top[0].Count(), -1, 1, top[0].MutableCPUDiff(), mathfn.NewRNG(5))
			layertest.Backward(t, l, top, []bool{true}, []*blob.Blob[float32]{bottom})
			ys[k], dxs[k] = slices.Clone(top[0].CPUData()), slices.Clone(bottom.CPUDiff())
		}
		tol := float16Tol
		if st == syncedmem.StorageBFloat16 {
			tol = bfloat16Tol
		}
		for i := range ys[0] {
			if (ys[0][i] == 0) != (ys[1][i] == 0) || (dxs[0][i] == 0) != (dxs[1][i] == 0) {
				t.Fatalf("%v: element %d: FP32 y %v dx %v, 16-bit y %v dx %v: another mask", st, i, ys[0][i], dxs[0][i], ys[1][i], dxs[1][i])
			}
		}
		layertest.CheckClose(t, st.String()+" dropout y", ys[1], ys[0], tol)
		layertest.CheckClose(t, st.String()+" dropout dx", dxs[1], dxs[0], tol)
	}
}
