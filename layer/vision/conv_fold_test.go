package vision_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
)

// A folded convolution computes its own pass followed by the fold's
// per-output affine map and ReLU, in one group or several, and holds its
// weights once in the form its way reads: no folded copy beside the
// layer's own, the im2col way's panels without an unpacked matrix, and
// neither of the two ways' forms where only the other runs. The layer's
// own weights keep their values (a program reading them gets what it
// loaded).
func TestFoldHoldsWeightsOnce(t *testing.T) {
	for _, c := range []struct {
		group, cin, cout int
		wino             bool
		h, w, pad        int
		unpacked         bool // a 1x1 output: a matrix-vector product, which reads them unpacked
	}{{1, 16, 24, false, 10, 9, 1, false}, {2, 8, 12, false, 10, 9, 1, false}, {1, 32, 32, true, 10, 9, 1, false}, {1, 16, 24, false, 3, 3, 0, true}} {
		t.Run(fmt.Sprintf("group%d_wino=%v_%dx%d", c.group, c.wino, c.h, c.w), func(t *testing.T) {
			defer vision.SetWinogradAlways(c.wino)()
			l := layertest.New[float32](t, fmt.Sprintf(`type: "Convolution" convolution_param { num_output: %d kernel_size: 3 pad: %d group: %d
			  weight_filler { type: "msra" } bias_filler { type: "gaussian" std: 0.1 } }`, c.cout, c.pad, c.group))
			bottom := []*blob.Blob[float32]{layertest.Blob[float32](t, 1, c.cin, c.h, c.w)}
			top := layertest.Blobs[float32](t, 1)
			layertest.SetUp(t, l, bottom, top)
			layertest.FillGaussian(bottom[0], 0, 1, 7)
			own := slices.Clone(l.LayerBase().Blobs()[0].CPUData())
			if err := l.ForwardCPU(bottom, top); err != nil {
				t.Fatal(err)
			}
			f := convFold(c.cout, c.wino)
			per := top[0].Count() / c.cout
			want := slices.Clone(top[0].CPUData())
			for i, v := range want {
				o := i / per
				want[i] = float32(math.Max(0, f.Scale[o]*float64(v)+f.Shift[o]))
			}
			if err := l.(layer.Folder[float32]).SetFold(f); err != nil {
				t.Fatal(err)
			}
			if folded, packed, _, wino := vision.FoldHolds(l); folded || packed != 0 || wino {
				t.Errorf("SetFold made forms before a pass: copy %v, %d packed, Winograd %v", folded, packed, wino)
			}
			for range 2 {
				if err := l.ForwardCPU(bottom, top); err != nil {
					t.Fatal(err)
				}
			}
			if vision.UsesWinograd(l) != c.wino {
				t.Fatalf("the Winograd way is taken: %v, want %v", !c.wino, c.wino)
			}
			var maxDiff, maxRef float64
			for i, v := range top[0].CPUData() {
				maxDiff = max(maxDiff, math.Abs(float64(v-want[i])))
				maxRef = max(maxRef, math.Abs(float64(want[i])))
			}
			if tol := 3e-5; maxDiff > tol*maxRef {
				t.Errorf("max |folded - conv then map| %.3g of the largest output; want <= %g", maxDiff/maxRef, tol)
			}
			folded, packed, unpacked, wino := vision.FoldHolds(l)
			wantPacked := c.group
			if c.wino {
				wantPacked = 0
			}
			if folded || unpacked != c.unpacked || packed != wantPacked || wino != c.wino {
				t.Errorf("the fold holds: copy %v, %d packed (unpacked too: %v), Winograd %v; want no copy, %d packed (unpacked too: %v), Winograd %v",
					folded, packed, unpacked, wino, wantPacked, c.unpacked, c.wino)
			}
			if !slices.Equal(l.LayerBase().Blobs()[0].CPUData(), own) {
				t.Error("folding changed the layer's own weights")
			}
		})
	}
}

// TestFoldedPanelsMatchIm2col runs folded convolutions from padded images
// (mathfn.GemmConv) and from im2col's columns on the same data: the same
// panels and tiles, so the same outputs bit for bit, at batch 1 (the
// product split over the cores) and 3 (images over the cores, serial
// products), strided (in phases), in groups, and dilated.
func TestFoldedPanelsMatchIm2col(t *testing.T) {
	for _, c := range []struct {
		num, cin, cout, h, w int
		param                string
	}{
		{1, 3, 64, 45, 45, "kernel_size: 7 stride: 2 pad: 3"}, // GoogLeNet's conv1, smaller
		{3, 3, 64, 45, 45, "kernel_size: 7 stride: 2 pad: 3"},
		{1, 3, 96, 51, 51, "kernel_size: 11 stride: 4"}, // CaffeNet's conv1, smaller
		{1, 16, 64, 15, 15, "kernel_size: 5 pad: 2 group: 2"},
		{3, 16, 64, 15, 15, "kernel_size: 5 pad: 2 group: 2"},
		{1, 8, 24, 17, 13, "kernel_size: 3 pad: 2 dilation: 2 stride: 3"},
	} {
		t.Run(fmt.Sprintf("%d_%d_%d_%dx%d_%s", c.num, c.cin, c.cout, c.h, c.w, c.param), func(t *testing.T) {
			defer vision.SetWinogradAlways(false)()
			l := layertest.New[float32](t, fmt.Sprintf(`type: "Convolution" convolution_param { num_output: %d %s
			  weight_filler { type: "msra" } bias_filler { type: "gaussian" std: 0.1 } }`, c.cout, c.param))
			bottom := []*blob.Blob[float32]{layertest.Blob[float32](t, c.num, c.cin, c.h, c.w)}
			top := layertest.Blobs[float32](t, 1)
			layertest.SetUp(t, l, bottom, top)
			layertest.FillGaussian(bottom[0], 0, 1, 7)
			if err := l.(layer.Folder[float32]).SetFold(convFold(c.cout, false)); err != nil {
				t.Fatal(err)
			}
			var outs [2][]float32
			for i, panels := range []bool{false, true} {
				restore := vision.SetConvPanels(panels)
				if err := l.ForwardCPU(bottom, top); err != nil {
					t.Fatal(err)
				}
				restore()
				outs[i] = slices.Clone(top[0].CPUData())
			}
			for i, want := range outs[0] {
				if got := outs[1][i]; got != want {
					t.Fatalf("output %d: %v from padded images, %v from im2col", i, got, want)
				}
			}
		})
	}
}
