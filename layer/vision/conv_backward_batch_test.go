package vision_test

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
)

// The host's batched passes (conv_backward_batch.go), which take
// over from the image-by-image one when the outputs have few positions
// and a part of the batch holds several images: gradient checks on
// batches large enough for it, and float32 against the image-by-image
// pass (force_nd_im2col, which they decline) on one and two cores, the
// tops bit for bit.

func init() {
	conv := func(p string) string {
		return `type: "Convolution" convolution_param { ` + p + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`
	}
	cases.AddGrad(
		layertest.GradCase{Name: "Convolution/batched/group", Bottom: [][]int{{4, 4, 4, 3}},
			Layer: conv("num_output: 4 group: 2 kernel_size: 3 pad: 1")},
		layertest.GradCase{Name: "Convolution/batched/1x1", Bottom: [][]int{{5, 3, 3, 2}},
			Layer: conv("num_output: 2 kernel_size: 1")},
		layertest.GradCase{Name: "Convolution/batched/1x1stride2", Bottom: [][]int{{4, 2, 5, 4}},
			Layer: conv("num_output: 3 kernel_size: 1 stride: 2 bias_term: false")},
	)
}

func TestBackwardBatchedMatchesImageByImage(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"num_output: 4 group: 2 kernel_size: 3 pad: 1", []int{8, 6, 7, 7}},
		{"num_output: 6 kernel_size: 1 bias_term: false", []int{5, 8, 4, 4}},
		{"num_output: 5 kernel_size: 1 stride: 2", []int{8, 4, 9, 9}},
		{"num_output: 3 kernel_size: 5 pad: 2 stride: 2", []int{7, 3, 10, 10}},
		{"num_output: 32 kernel_size: 3 pad: 1", []int{4, 32, 7, 7}},
		// 196 positions, 3 images a product: 7 images in products of 3, 2
		// and 2 on one core, of 2 and 2, and 3 on two.
		{"num_output: 8 kernel_size: 3 pad: 1", []int{7, 4, 14, 14}},
		{"num_output: 9 kernel_size: 3 pad: 1 group: 3", []int{9, 6, 5, 5}},
		{"num_output: 4 kernel_size: 3 pad: 1", []int{3, 2, 30, 30}}, // too many positions: image by image
	} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprint(c.param, c.shape, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer vision.SetConvPanels(false)() // the im2col products (conv_panels_test.go has the others)
				p := `type: "Convolution" convolution_param { ` + c.param + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" }`
				batched := layertest.New[float32](t, p+` }`)
				ref := layertest.New[float32](t, p+` force_nd_im2col: true }`)
				x := layertest.Blob[float32](t, c.shape...)
				layertest.FillGaussian(x, 0, 1, 21)
				yb, yr := layertest.Blob[float32](t), layertest.Blob[float32](t)
				layertest.SetUp(t, batched, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yb})
				layertest.SetUp(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
				for i, b := range batched.LayerBase().Blobs() {
					if err := ref.LayerBase().Blobs()[i].CopyFrom(b, false, false); err != nil {
						t.Fatal(err)
					}
					// The passes add to the gradients they find.
					old := layertest.Blob[float32](t, b.Count())
					layertest.FillGaussian(old, 0, 1, uint64(30+i))
					copy(b.MutableCPUDiff(), old.CPUData())
					copy(ref.LayerBase().Blobs()[i].MutableCPUDiff(), old.CPUData())
				}
				layertest.Forward(t, batched, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yb})
				layertest.Forward(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
				// The batched forward pass sums each output in the same
				// order as the image-by-image one: the same bits.
				for j, v := range yb.CPUData() {
					if w := yr.CPUData()[j]; math.Float32bits(v) != math.Float32bits(w) {
						t.Fatalf("top %d: %v batched, %v image by image", j, v, w)
					}
				}
				layertest.FillGaussian(yb, 0, 1, 22)
				copy(yr.MutableCPUDiff(), yb.CPUData())
				copy(yb.MutableCPUDiff(), yb.CPUData())
				dxb := make([]float32, x.Count())
				layertest.Backward(t, batched, []*blob.Blob[float32]{yb}, []bool{true}, []*blob.Blob[float32]{x})
				copy(dxb, x.CPUDiff())
				layertest.Backward(t, ref, []*blob.Blob[float32]{yr}, []bool{true}, []*blob.Blob[float32]{x})
				layertest.CheckClose(t, "bottom diff", dxb, x.CPUDiff(), 1e-5)
				for i, b := range batched.LayerBase().Blobs() {
					layertest.CheckClose(t, fmt.Sprintf("param %d diff", i), b.CPUDiff(), ref.LayerBase().Blobs()[i].CPUDiff(), 1e-4)
				}
			})
		}
	}
}

// TestChunkedMatchesImageByImage holds the host's passes over a few output
// rows at a time (conv_chunks.go), made to take pieces of 1 to 3 rows, to
// the image-by-image pass (force_nd_im2col, which they decline): the tops
// bit for bit, the gradients to rounding (their sums are taken in another
// order), on one and two cores.
func TestChunkedMatchesImageByImage(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
		bytes int
	}{
		{"num_output: 5 kernel_size: 3 pad: 1", []int{3, 4, 12, 11}, 1},              // a row a piece
		{"num_output: 7 kernel_size: 3 pad: 1", []int{2, 3, 9, 10}, 2 * 27 * 10 * 4}, // 2 rows a piece, 5 pieces
		{"num_output: 4 kernel_size: 5 pad: 2 stride: 2", []int{3, 2, 15, 13}, 3 * 50 * 7 * 4},
		{"num_output: 6 kernel_size: 3 dilation: 2 bias_term: false", []int{2, 3, 11, 9}, 1},
		{"num_output: 3 kernel_size: 2 stride: 3 pad: 1", []int{3, 2, 14, 16}, 2 * 8 * 6 * 4},
	} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprint(c.param, c.shape, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer vision.SetConvChunks(c.bytes, 1)()
				p := `type: "Convolution" convolution_param { ` + c.param + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" }`
				chunked := layertest.New[float32](t, p+` }`)
				ref := layertest.New[float32](t, p+` force_nd_im2col: true }`)
				x := layertest.Blob[float32](t, c.shape...)
				layertest.FillGaussian(x, 0, 1, 23)
				yc, yr := layertest.Blob[float32](t), layertest.Blob[float32](t)
				layertest.SetUp(t, chunked, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yc})
				layertest.SetUp(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
				for i, b := range chunked.LayerBase().Blobs() {
					if err := ref.LayerBase().Blobs()[i].CopyFrom(b, false, false); err != nil {
						t.Fatal(err)
					}
					old := layertest.Blob[float32](t, b.Count())
					layertest.FillGaussian(old, 0, 1, uint64(40+i))
					copy(b.MutableCPUDiff(), old.CPUData())
					copy(ref.LayerBase().Blobs()[i].MutableCPUDiff(), old.CPUData())
				}
				layertest.Forward(t, chunked, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yc})
				layertest.Forward(t, ref, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{yr})
				for j, v := range yc.CPUData() {
					if w := yr.CPUData()[j]; math.Float32bits(v) != math.Float32bits(w) {
						t.Fatalf("top %d: %v chunked, %v image by image", j, v, w)
					}
				}
				layertest.FillGaussian(yc, 0, 1, 24)
				copy(yr.MutableCPUDiff(), yc.CPUData())
				copy(yc.MutableCPUDiff(), yc.CPUData())
				dxc := make([]float32, x.Count())
				// Stale values in the bottom's gradient: the pass overwrites it.
				layertest.FillGaussian(x, 0, 1, 25)
				copy(x.MutableCPUDiff(), x.CPUData())
				layertest.FillGaussian(x, 0, 1, 23)
				layertest.Backward(t, chunked, []*blob.Blob[float32]{yc}, []bool{true}, []*blob.Blob[float32]{x})
				copy(dxc, x.CPUDiff())
				layertest.Backward(t, ref, []*blob.Blob[float32]{yr}, []bool{true}, []*blob.Blob[float32]{x})
				layertest.CheckClose(t, "bottom diff", dxc, x.CPUDiff(), 1e-5)
				for i, b := range chunked.LayerBase().Blobs() {
					layertest.CheckClose(t, fmt.Sprintf("param %d diff", i), b.CPUDiff(), ref.LayerBase().Blobs()[i].CPUDiff(), 1e-4)
				}
			})
		}
	}
}

// TestPackedForwardMatchesOneCore holds the host's forward pass on two
// cores, whose products read the weights packed once for the pass, to the
// one-core pass, whose products pack them as they go: the same tops bit
// for bit.
func TestPackedForwardMatchesOneCore(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"num_output: 13 kernel_size: 3 pad: 1", []int{4, 3, 20, 20}},
		{"num_output: 7 kernel_size: 1 bias_term: false", []int{3, 9, 16, 12}},
		{"num_output: 300 kernel_size: 2 stride: 2", []int{2, 40, 24, 24}}, // a second block of rows
	} {
		t.Run(fmt.Sprint(c.param, c.shape), func(t *testing.T) {
			p := `type: "Convolution" convolution_param { ` + c.param + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`
			x := layertest.Blob[float32](t, c.shape...)
			layertest.FillGaussian(x, 0, 1, 31)
			tops := onOneAndTwoCores(t, p, x, nil, func(_ layer.Layer[float32], y *blob.Blob[float32]) []float32 { return y.CPUData() })
			for j, v := range tops[1] {
				if w := tops[0][j]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("top %d: %v on two cores, %v on one", j, v, w)
				}
			}
		})
	}
}

// TestPackedBackwardMatchesOneCore holds the host's backward pass on two
// cores, whose bottom-gradient products read the transposed weights
// packed once for the pass (conv_backward_packed.go), image by image and
// batched, to the one-core pass with the packing off, whose products pack
// them as they go: the same bottom gradient bit for bit (the weight
// gradients sum the parts' in another order).
func TestPackedBackwardMatchesOneCore(t *testing.T) {
	for _, c := range []struct {
		param string
		shape []int
	}{
		{"num_output: 13 kernel_size: 3 pad: 1", []int{4, 3, 24, 24}},          // image by image, col2im
		{"num_output: 7 kernel_size: 1 bias_term: false", []int{3, 9, 24, 24}}, // image by image, 1x1
		{"num_output: 9 kernel_size: 3 pad: 1", []int{8, 6, 10, 10}},           // batched
		{"num_output: 300 kernel_size: 2 stride: 2", []int{2, 40, 48, 48}},     // a second block of rows
	} {
		t.Run(fmt.Sprint(c.param, c.shape), func(t *testing.T) {
			p := `type: "Convolution" convolution_param { ` + c.param + ` weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`
			x := layertest.Blob[float32](t, c.shape...)
			layertest.FillGaussian(x, 0, 1, 31)
			defer vision.SetConvPanels(false)() // W^T's products (conv_panels_test.go has the others)
			dxs := onOneAndTwoCores(t, p, x, func(i int) func() { return vision.SetConvPackBackward(i == 1) },
				func(l layer.Layer[float32], y *blob.Blob[float32]) []float32 {
					layertest.FillGaussian(y, 0, 1, 32)
					copy(y.MutableCPUDiff(), y.CPUData())
					layertest.Backward(t, l, []*blob.Blob[float32]{y}, []bool{true}, []*blob.Blob[float32]{x})
					return x.CPUDiff()
				})
			for j, v := range dxs[1] {
				if w := dxs[0][j]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("bottom diff %d: %v on two cores, %v on one", j, v, w)
				}
			}
		})
	}
}

// onOneAndTwoCores sets the convolution p up on x on one core, then on
// two with the first one's weights, runs its forward pass and returns a
// copy of what run returns after it, for each. before, if not nil, runs
// first each time (i: 0 for one core, 1 for two), and the function it
// returns at the end.
func onOneAndTwoCores(t *testing.T, p string, x *blob.Blob[float32], before func(i int) func(), run func(l layer.Layer[float32], y *blob.Blob[float32]) []float32) [2][]float32 {
	return twoRuns(t, p, x, [2]int{1, 2}, before, run)
}

// twoRuns is onOneAndTwoCores on procs[0] cores, then on procs[1], the
// layer with a net's host scratch.
func twoRuns(t *testing.T, p string, x *blob.Blob[float32], procs [2]int, before func(i int) func(), run func(l layer.Layer[float32], y *blob.Blob[float32]) []float32) [2][]float32 {
	t.Helper()
	var out [2][]float32
	var weights []*blob.Blob[float32]
	for i, procs := range procs {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			if before != nil {
				defer before(i)()
			}
			l := layertest.New[float32](t, p)
			// A net's shared scratch, as in a net (which the parts must
			// not ask for buffers at once).
			l.LayerBase().SetHostScratch(layer.NewHostScratch())
			y := layertest.Blob[float32](t)
			layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			if i == 0 {
				weights = l.LayerBase().Blobs()
			} else {
				for j, b := range l.LayerBase().Blobs() {
					if err := b.CopyFrom(weights[j], false, false); err != nil {
						t.Fatal(err)
					}
				}
			}
			layertest.Forward(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
			out[i] = append([]float32(nil), run(l, y)...)
		}()
	}
	return out
}
