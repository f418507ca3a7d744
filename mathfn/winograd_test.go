package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// directConv3x3 is the reference: a float64 3x3 convolution in groups,
// stride 1, with bias and ReLU (w cout x cin/groups x 3 x 3).
func directConv3x3(x, w, bias []float32, num, cin, cout, groups, h, wd, pad int, relu bool, slope float64) []float64 {
	oh, ow := h+2*pad-2, wd+2*pad-2
	y := make([]float64, num*cout*oh*ow)
	cg := cin / groups
	for n := range num {
		for o := range cout {
			c0 := o / (cout / groups) * cg // the group's first channel
			for i := range oh {
				for j := range ow {
					s := float64(bias[o])
					for c := c0; c < c0+cg; c++ {
						for ky := range 3 {
							for kx := range 3 {
								yy, xx := i+ky-pad, j+kx-pad
								if yy < 0 || yy >= h || xx < 0 || xx >= wd {
									continue
								}
								s += float64(x[((n*cin+c)*h+yy)*wd+xx]) * float64(w[((o*cg+c-c0)*3+ky)*3+kx])
							}
						}
					}
					if relu && s < 0 {
						s *= slope
					}
					y[((n*cout+o)*oh+i)*ow+j] = s
				}
			}
		}
	}
	return y
}

// winoError returns max |winograd - direct| / max |direct| for a random
// layer.
func winoError(t *testing.T, num, cin, cout, h, w, pad int, relu bool) float64 {
	return winoErrorGroups(t, num, cin, cout, 1, h, w, pad, relu, 0, 0)
}

// winoErrorBlock is winoError with rounds of block tiles (0: Reshape's).
func winoErrorBlock(t *testing.T, num, cin, cout, h, w, pad int, relu bool, block int, slope float32) float64 {
	t.Helper()
	return winoErrorGroups(t, num, cin, cout, 1, h, w, pad, relu, block, slope)
}

// winoErrorGroups is winoErrorBlock of a convolution in groups.
func winoErrorGroups(t *testing.T, num, cin, cout, groups, h, w, pad int, relu bool, block int, slope float32) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(num*1000+cin), uint64(h*100+w+pad)))
	x := make([]float32, num*cin*h*w)
	wt := make([]float32, cout*cin/groups*9)
	bias := make([]float32, cout)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	scale := math.Sqrt(2 / float64(cin/groups*9)) // MSRA, as the nets are trained
	for i := range wt {
		wt[i] = float32(r.NormFloat64() * scale)
	}
	for i := range bias {
		bias[i] = float32(r.NormFloat64() * 0.1)
	}
	wg, err := NewWinogradGroups(cout, cin, groups, wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wg.Reshape(num, h, w, pad, pad); err != nil {
		t.Fatal(err)
	}
	if block > 0 {
		wg.block = block // the buffers hold Reshape's larger rounds
	}
	oh, ow := h+2*pad-2, w+2*pad-2
	y := make([]float32, num*cout*oh*ow+1)
	y[len(y)-1] = 42 // a guard: nothing past the output is written
	wg.Forward(x, y[:len(y)-1], &Epilogue[float32]{RowBias: bias, ReLU: relu, Slope: slope})
	if y[len(y)-1] != 42 {
		t.Fatal("Forward wrote past the output")
	}
	want := directConv3x3(x, wt, bias, num, cin, cout, groups, h, w, pad, relu, float64(slope))
	var maxDiff, maxRef float64
	for i, v := range want {
		maxDiff = max(maxDiff, math.Abs(float64(y[i])-v))
		maxRef = max(maxRef, math.Abs(v))
	}
	return maxDiff / maxRef
}

// winoTolerance is what the tests allow: the relative error of float32
// Winograd F(4x4, 3x3) against a float64 convolution, measured at 1e-7
// to 8e-6 on these shapes and ResNet-50's deep ones.
const winoTolerance = 2e-5

func TestWinogradMatchesDirect(t *testing.T) {
	for _, c := range []struct{ num, cin, cout, h, w, pad int }{
		{1, 1, 1, 3, 3, 0},
		{1, 1, 5, 7, 9, 1},
		{3, 4, 6, 5, 6, 1},
		{1, 3, 8, 13, 11, 0},
		{3, 16, 7, 10, 10, 1},
		{1, 32, 33, 14, 14, 1},
		{2, 17, 9, 8, 8, 0},
		{1, 5, 4, 4, 15, 2},
		{3, 64, 40, 7, 7, 1},
	} {
		for _, relu := range []bool{false, true} {
			name := fmt.Sprintf("n%d_c%d_o%d_%dx%d_p%d_relu%v", c.num, c.cin, c.cout, c.h, c.w, c.pad, relu)
			t.Run(name, func(t *testing.T) {
				if e := winoError(t, c.num, c.cin, c.cout, c.h, c.w, c.pad, relu); e > winoTolerance {
					t.Errorf("relative error %.3g, want <= %g", e, winoTolerance)
				}
			})
		}
	}
}

// TestWinogradGroups covers convolutions in groups against the direct
// one: 2 to 4 groups, few and many channels a group, several images and
// rounds, pads 0 to 2; the tolerance is the one group's (each output
// sums only its group's channels, fewer terms than one group of all).
func TestWinogradGroups(t *testing.T) {
	for _, c := range []struct{ num, cin, cout, groups, h, w, pad, block int }{
		{1, 2, 2, 2, 5, 5, 1, 0},
		{1, 8, 12, 2, 13, 13, 1, 0},
		{2, 12, 6, 3, 9, 7, 0, 0},
		{3, 16, 16, 4, 6, 10, 2, 0},
		{1, 64, 48, 2, 13, 13, 1, 0},
		{2, 24, 20, 2, 17, 19, 1, 16},
	} {
		name := fmt.Sprintf("n%d_c%d_o%d_g%d_%dx%d_p%d_b%d", c.num, c.cin, c.cout, c.groups, c.h, c.w, c.pad, c.block)
		t.Run(name, func(t *testing.T) {
			if e := winoErrorGroups(t, c.num, c.cin, c.cout, c.groups, c.h, c.w, c.pad, true, c.block, 0); e > winoTolerance {
				t.Errorf("relative error %.3g, want <= %g", e, winoTolerance)
			}
		})
	}
}

// TestWinogradRounds covers a pass of several rounds of tiles (Reshape's
// block smaller than the tiles), the last one short.
func TestWinogradRounds(t *testing.T) {
	if e := winoErrorBlock(t, 2, 24, 20, 17, 19, 1, true, 16, 0); e > winoTolerance {
		t.Errorf("relative error %.3g, want <= %g", e, winoTolerance)
	}
}

// TestWinogradDeepLayers reports the error at two of ResNet-50's shapes,
// where the sums are longest.
func TestWinogradDeepLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("long float64 reference")
	}
	for _, c := range []struct{ cin, hw int }{{256, 14}, {512, 7}} {
		e := winoError(t, 1, c.cin, 64, c.hw, c.hw, 1, false)
		t.Logf("%d channels %dx%d: relative error %.3g", c.cin, c.hw, c.hw, e)
		if e > winoTolerance {
			t.Errorf("relative error %.3g, want <= %g", e, winoTolerance)
		}
	}
}

// TestWinogradLeaky covers a ReLU with a negative slope (the vector
// kernels have none: Go transforms the products back).
func TestWinogradLeaky(t *testing.T) {
	if e := winoErrorBlock(t, 2, 9, 11, 10, 13, 1, true, 0, 0.1); e > winoTolerance {
		t.Errorf("relative error %.3g, want <= %g", e, winoTolerance)
	}
}

func TestWinogradErrors(t *testing.T) {
	if _, err := NewWinograd[float32](0, 3, nil); err == nil {
		t.Error("no outputs: no error")
	}
	if _, err := NewWinograd(2, 3, make([]float32, 10)); err == nil {
		t.Error("too few weights: no error")
	}
	if _, err := NewWinogradGroups(4, 6, 4, make([]float32, 4*6*9), nil); err == nil {
		t.Error("6 channels in 4 groups: no error")
	}
	if _, err := NewWinogradGroups(4, 6, 2, make([]float32, 4*3*9-1), nil); err == nil {
		t.Error("too few grouped weights: no error")
	}
	wg, err := NewWinograd(2, 3, make([]float32, 54))
	if err != nil {
		t.Fatal(err)
	}
	if err := wg.Reshape(1, 2, 2, 0, 0); err == nil {
		t.Error("2x2 without padding: no error")
	}
}

func TestWinogradAllocatesNothing(t *testing.T) {
	wg, err := NewWinograd(16, 16, make([]float32, 16*16*9))
	if err != nil {
		t.Fatal(err)
	}
	if err := wg.Reshape(2, 20, 20, 1, 1); err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 2*16*400), make([]float32, 2*16*400)
	ep := &Epilogue[float32]{RowBias: make([]float32, 16), ReLU: true}
	wg.Forward(x, y, ep)
	if n := testing.AllocsPerRun(5, func() {
		_ = wg.Reshape(2, 20, 20, 1, 1)
		wg.Forward(x, y, ep)
	}); n > 0 {
		t.Errorf("%v allocations a pass", n)
	}
}

// NewWinogradScaled gives bit for bit what NewWinograd of the scaled
// filters gives, over several chunks of outputs and blocks of the packed
// rows (300 outputs: winoChunk 48, gemmMC 240).
func TestWinogradScaledIsScaledCopy(t *testing.T) {
	const num, cin, cout, h, w = 1, 20, 300, 9, 11
	r := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, num*cin*h*w)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	wt, scaled := make([]float32, cout*cin*9), make([]float32, cout*cin*9)
	scale := make([]float64, cout)
	for o := range cout {
		scale[o] = 0.2 + r.Float64()
		for i := o * cin * 9; i < (o+1)*cin*9; i++ {
			wt[i] = float32(r.NormFloat64() * 0.1)
			scaled[i] = float32(float64(wt[i]) * scale[o])
		}
	}
	run := func(wg *Winograd[float32], err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := wg.Reshape(num, h, w, 1, 1); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, num*cout*h*w)
		wg.Forward(x, y, &Epilogue[float32]{})
		return y
	}
	want := run(NewWinograd(cout, cin, scaled))
	got := run(NewWinogradScaled(cout, cin, wt, scale))
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
		}
	}
	if _, err := NewWinogradScaled(cout, cin, wt, scale[:5]); err == nil {
		t.Error("5 scales for 300 outputs: no error")
	}
}
