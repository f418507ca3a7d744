package vision_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
	"github.com/gocaffe/gocaffe/mathfn"
)

// The Winograd way of folded 3x3 convolutions (conv_winograd.go) against
// the folded im2col and GEMM, and the benchmark its shape rule comes
// from.

// foldedConv builds a float32 Convolution of cout 3x3 filters (pad pad)
// on a bottom of shape, folded with a per-channel affine map and a ReLU,
// with the Winograd way on or off.
func foldedConv(t testing.TB, shape []int, cout, pad int, wino bool) (layer.Layer[float32], []*blob.Blob[float32], []*blob.Blob[float32]) {
	t.Helper()
	return foldedConvPad(t, shape, cout, fmt.Sprintf("pad: %d", pad), wino)
}

// foldedConvPad is foldedConv with the padding fields given (and any
// other fields of convolution_param: group).
func foldedConvPad(t testing.TB, shape []int, cout int, pad string, wino bool) (layer.Layer[float32], []*blob.Blob[float32], []*blob.Blob[float32]) {
	t.Helper()
	l := layertest.New[float32](t, fmt.Sprintf(`type: "Convolution" convolution_param { num_output: %d kernel_size: 3 %s
	  weight_filler { type: "msra" } bias_filler { type: "gaussian" std: 0.1 } }`, cout, pad))
	bottom := []*blob.Blob[float32]{layertest.Blob[float32](t, shape...)}
	top := layertest.Blobs[float32](t, 1)
	layertest.SetUp(t, l, bottom, top)
	layertest.FillGaussian(bottom[0], 0, 1, 7)
	if err := l.(layer.Folder[float32]).SetFold(convFold(cout, wino)); err != nil {
		t.Fatal(err)
	}
	return l, bottom, top
}

// convFold is a per-channel affine map (a BatchNorm's) and a ReLU.
func convFold(cout int, wino bool) *layer.Fold {
	f := &layer.Fold{Scale: make([]float64, cout), Shift: make([]float64, cout), Act: layer.Activation{Kind: layer.ActReLU}, NoWinograd: !wino}
	for o := range cout {
		f.Scale[o], f.Shift[o] = 0.5+float64(o%7)/7, float64(o%5)/10-0.2
	}
	return f
}

// TestWinogradMatchesIm2col runs folded convolutions both ways on the
// same data: odd sizes, sizes not a multiple of 4, pad 0 and 1, one
// channel, batches of 1 and 3, 2 to 4 groups (each group's products on
// their own, the transforms over all channels: a group's channels and
// outputs offset in the batch's planes). The tolerance is the relative
// error of float32 F(4x4, 3x3) (mathfn's winoTolerance) plus that of the
// GEMM; a group's outputs sum fewer channels, so it holds for them too.
func TestWinogradMatchesIm2col(t *testing.T) {
	defer vision.SetWinogradAlways(true)()
	const tol = 3e-5
	for _, c := range []struct {
		num, cin, cout, h, w int
		pad                  string
	}{
		{1, 1, 4, 5, 5, "pad: 1"},
		{3, 1, 8, 9, 7, "pad: 0"},
		{1, 3, 16, 11, 13, "pad: 1"},
		{3, 8, 5, 6, 10, "pad: 1"},
		{1, 32, 48, 14, 14, "pad: 1"},
		{3, 24, 16, 7, 7, "pad: 1"},
		{1, 64, 64, 17, 15, "pad: 0"},
		{2, 16, 24, 9, 12, "pad: 2"},
		{1, 16, 8, 10, 11, "pad_h: 1 pad_w: 0"},
		{3, 12, 20, 5, 22, "pad_h: 0 pad_w: 2"},
		{1, 20, 20, 3, 3, "pad: 1"},
		{1, 8, 12, 13, 13, "pad: 1 group: 2"},
		{3, 12, 6, 9, 7, "pad: 0 group: 3"},
		{2, 16, 24, 10, 11, "pad: 2 group: 4"},
		{1, 64, 48, 13, 13, "pad: 1 group: 2"},
		{2, 32, 32, 17, 19, "pad_h: 1 pad_w: 0 group: 2"},
	} {
		t.Run(fmt.Sprintf("n%d_c%d_o%d_%dx%d_%s", c.num, c.cin, c.cout, c.h, c.w, c.pad), func(t *testing.T) {
			l, bottom, top := foldedConvPad(t, []int{c.num, c.cin, c.h, c.w}, c.cout, c.pad, false)
			want := forwardOnce(t, l, bottom, top, false)
			got := forwardOnce(t, l, bottom, top, true)
			var maxDiff, maxRef float64
			for i, v := range want {
				maxDiff = max(maxDiff, math.Abs(float64(got[i]-v)))
				maxRef = max(maxRef, math.Abs(float64(v)))
			}
			if maxDiff > tol*maxRef {
				t.Errorf("max |winograd - im2col| %.3g, %.3g of the largest output; want <= %g", maxDiff, maxDiff/maxRef, tol)
			}
		})
	}
}

// forwardOnce returns the folded layer's output (the fold of foldedConv
// again, the Winograd way on or off), checking which way ran.
func forwardOnce(t *testing.T, l layer.Layer[float32], bottom, top []*blob.Blob[float32], wino bool) []float32 {
	t.Helper()
	if err := l.(layer.Folder[float32]).SetFold(convFold(top[0].Shape()[1], wino)); err != nil {
		t.Fatal(err)
	}
	if vision.UsesWinograd(l) != wino {
		t.Fatalf("the Winograd way is taken: %v, want %v", !wino, wino)
	}
	if err := l.ForwardCPU(bottom, top); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), top[0].CPUData()...)
}

// BenchmarkConvFolded times folded 3x3 layers of the deploy nets both
// ways, at batch 1 and 10:
//
//	GOMAXPROCS=2 go test ./layer/vision/ -run X -bench ConvFolded
func BenchmarkConvFolded(b *testing.B) {
	defer vision.SetWinogradAlways(true)()
	for _, s := range []struct {
		name            string
		cin, cout, size int
	}{
		{"resnet_64_56", 64, 64, 56},
		{"resnet_128_28", 128, 128, 28},
		{"resnet_256_14", 256, 256, 14},
		{"resnet_512_7", 512, 512, 7},
		{"googlenet_conv2_64_192_56", 64, 192, 56},
		{"googlenet_96_128_28", 96, 128, 28},
		{"googlenet_128_192_28", 128, 192, 28},
		{"googlenet_112_224_14", 112, 224, 14},
		{"googlenet_160_320_7", 160, 320, 7},
		{"googlenet_16_32_28", 16, 32, 28},
		{"googlenet_32_64_7", 32, 64, 7},
		{"caffenet_256_384_13", 256, 384, 13},
		{"caffenet_384_384_13", 384, 384, 13},
		{"caffenet_384_256_13", 384, 256, 13},
	} {
		for _, num := range []int{1, 10} {
			benchConvFolded(b, s.name, s.cin, s.cout, s.size, num, 1)
		}
	}
	// CaffeNet's conv4 and conv5 as they are, in two groups.
	for _, num := range []int{1, 10} {
		benchConvFolded(b, "caffenet_conv4_g2", 384, 384, 13, num, 2)
		benchConvFolded(b, "caffenet_conv5_g2", 384, 256, 13, num, 2)
	}
}

// BenchmarkConvFoldedCrossover times the shapes near the crossover: few
// channels, and few tiles (7x7 at batches 1 to 4).
func BenchmarkConvFoldedCrossover(b *testing.B) {
	defer vision.SetWinogradAlways(true)()
	for _, s := range []struct {
		name                 string
		cin, cout, size, num int
	}{
		{"32_64_28", 32, 64, 28, 1},
		{"48_48_28", 48, 48, 28, 1},
		{"32_32_56", 32, 32, 56, 1},
		{"48_64_14", 48, 64, 14, 1},
		{"512_7", 512, 512, 7, 2},
		{"512_7", 512, 512, 7, 3},
		{"512_7", 512, 512, 7, 4},
		{"256_7", 256, 256, 7, 1},
		{"256_7", 256, 256, 7, 2},
		{"160_320_7", 160, 320, 7, 2},
		{"128_10", 128, 128, 10, 1},
		{"256_10", 256, 256, 10, 1},
		{"512_10", 512, 512, 10, 1},
	} {
		benchConvFolded(b, s.name, s.cin, s.cout, s.size, s.num, 1)
	}
}

// benchConvFolded times one shape (pad 1, in group groups) both ways.
func benchConvFolded(b *testing.B, name string, cin, cout, size, num, groups int) {
	for _, wino := range []bool{false, true} {
		way := "im2col"
		if wino {
			way = "winograd"
		}
		b.Run(fmt.Sprintf("%s/b%d/%s", name, num, way), func(b *testing.B) {
			l, bottom, top := foldedConvPad(b, []int{num, cin, size, size}, cout, fmt.Sprintf("pad: 1 group: %d", groups), wino)
			// A first pass, untimed: it transforms the filters (on first
			// use) and sizes the buffers.
			if err := l.ForwardCPU(bottom, top); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := l.ForwardCPU(bottom, top); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The shape rule (winoWins) takes Winograd where the benchmark says it
// wins, and never in a fold that asks for none or a window it does not
// compute.
func TestWinogradShapeRule(t *testing.T) {
	for _, c := range []struct {
		shape     []int
		cout, pad int
		wino      bool
		want      bool
	}{
		{[]int{1, 64, 56, 56}, 64, 1, true, true},
		{[]int{1, 64, 56, 56}, 64, 1, false, false}, // Fold.NoWinograd
		{[]int{1, 512, 7, 7}, 512, 1, true, false},  // 4 blocks
		{[]int{10, 512, 7, 7}, 512, 1, true, true},
		{[]int{1, 16, 28, 28}, 32, 1, true, false}, // few channels
		{[]int{10, 32, 7, 7}, 64, 1, true, false},  // few channels on 7x7
		{[]int{1, 48, 14, 14}, 64, 1, true, true},
		{[]int{1, 3, 224, 224}, 64, 1, true, false},
	} {
		l, _, _ := foldedConv(t, c.shape, c.cout, c.pad, c.wino)
		want := c.want && mathfn.WinogradVector[float32]() // Go transforms: never
		if got := vision.UsesWinograd(l); got != want {
			t.Errorf("%v to %d channels, Winograd allowed %v: takes it %v, want %v", c.shape, c.cout, c.wino, got, want)
		}
	}
	// In groups the rule reads a group's channels.
	for _, c := range []struct {
		shape     []int
		cout, grp int
		want      bool
	}{
		{[]int{1, 384, 13, 13}, 256, 2, true}, // CaffeNet's conv5
		{[]int{1, 64, 28, 28}, 64, 4, false},  // 16 channels a group
		{[]int{1, 128, 7, 7}, 128, 2, false},  // 64 a group on 7x7
	} {
		l, _, _ := foldedConvPad(t, c.shape, c.cout, fmt.Sprintf("pad: 1 group: %d", c.grp), true)
		want := c.want && mathfn.WinogradVector[float32]()
		if got := vision.UsesWinograd(l); got != want {
			t.Errorf("%v to %d channels in %d groups: takes Winograd %v, want %v", c.shape, c.cout, c.grp, got, want)
		}
	}
	// A strided 3x3 does not fit.
	l := layertest.New[float32](t, `type: "Convolution" convolution_param { num_output: 64 kernel_size: 3 stride: 2 pad: 1 }`)
	bottom := []*blob.Blob[float32]{layertest.Blob[float32](t, 1, 64, 56, 56)}
	top := layertest.Blobs[float32](t, 1)
	layertest.SetUp(t, l, bottom, top)
	if err := l.(layer.Folder[float32]).SetFold(convFold(64, true)); err != nil {
		t.Fatal(err)
	}
	if vision.UsesWinograd(l) {
		t.Error("a stride-2 3x3 convolution takes Winograd")
	}
	// Nor does float64.
	l64 := layertest.New[float64](t, `type: "Convolution" convolution_param { num_output: 64 kernel_size: 3 pad: 1 }`)
	b64 := []*blob.Blob[float64]{layertest.Blob[float64](t, 1, 64, 56, 56)}
	layertest.SetUp(t, l64, b64, layertest.Blobs[float64](t, 1))
	if err := l64.(layer.Folder[float64]).SetFold(convFold(64, true)); err != nil {
		t.Fatal(err)
	}
	if vision.UsesWinograd(l64) {
		t.Error("a float64 convolution takes Winograd")
	}
}
