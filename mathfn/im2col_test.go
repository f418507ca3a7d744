package mathfn

import (
	"math"
	"testing"
)

// geometry builds a valid geometry from input sizes and per-axis settings.
func geometry(channels int, in, kernel, pad, stride, dilation []int) *ConvGeometry {
	g := &ConvGeometry{Channels: channels, In: in, Kernel: kernel, Pad: pad, Stride: stride, Dilation: dilation}
	for i := range in {
		g.Out = append(g.Out, ConvOutputSize(in[i], kernel[i], pad[i], stride[i], dilation[i]))
	}
	return g
}

var testGeometries = []*ConvGeometry{
	geometry(3, []int{7, 9}, []int{3, 2}, []int{1, 0}, []int{2, 1}, []int{1, 2}),
	geometry(2, []int{5, 5}, []int{5, 5}, []int{2, 2}, []int{1, 1}, []int{1, 1}),
	geometry(1, []int{6, 4}, []int{1, 1}, []int{0, 0}, []int{3, 2}, []int{1, 1}),
	geometry(2, []int{11}, []int{3}, []int{1}, []int{2}, []int{2}),
	geometry(2, []int{4, 5, 6}, []int{2, 3, 2}, []int{1, 0, 1}, []int{1, 2, 2}, []int{2, 1, 1}),
}

// naiveIm2col is the definition in ConvGeometry's documentation, element
// by element.
func naiveIm2col(im []float64, g *ConvGeometry) []float64 {
	n := len(g.In)
	col := make([]float64, g.ColSize())
	outSize, kernelSize := prod(g.Out), prod(g.Kernel)
	for row := range g.KernelDim() {
		for pos := range outSize {
			k, o := make([]int, n), make([]int, n)
			kr, pr := row%kernelSize, pos
			for a := n - 1; a >= 0; a-- {
				k[a], kr = kr%g.Kernel[a], kr/g.Kernel[a]
				o[a], pr = pr%g.Out[a], pr/g.Out[a]
			}
			idx, inside := row/kernelSize, true
			for a := range n {
				x := o[a]*g.Stride[a] - g.Pad[a] + k[a]*g.Dilation[a]
				inside = inside && x >= 0 && x < g.In[a]
				idx = idx*g.In[a] + x
			}
			if inside {
				col[row*outSize+pos] = im[idx]
			}
		}
	}
	return col
}

func TestIm2colMatchesDefinition(t *testing.T) {
	for i, g := range testGeometries {
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		im := randSlice[float64](g.ImSize(), -1, 1, uint64(i))
		want := naiveIm2col(im, g)
		for _, forceND := range []bool{false, true} {
			g.ForceND = forceND
			col := randSlice[float64](g.ColSize(), 5, 6, 99) // poison: every element must be written
			Im2col(im, g, col)
			closeTo(t, "Im2col", col, want)
		}
		g.ForceND = false
	}
}

// Col2im is the adjoint of Im2col: <Im2col(x), y> == <x, Col2im(y)>.
func TestCol2imIsTheAdjoint(t *testing.T) {
	for i, g := range testGeometries {
		for _, forceND := range []bool{false, true} {
			g.ForceND = forceND
			x := randSlice[float64](g.ImSize(), -1, 1, uint64(i))
			y := randSlice[float64](g.ColSize(), -1, 1, uint64(i+50))
			col := make([]float64, g.ColSize())
			Im2col(x, g, col)
			im := randSlice[float64](g.ImSize(), 5, 6, 98) // poison: Col2im overwrites
			Col2im(y, g, im)
			lhs, rhs := Dot(len(col), col, y), Dot(len(im), x, im)
			if math.Abs(lhs-rhs) > 1e-10*math.Max(1, math.Abs(lhs)) {
				t.Errorf("geometry %d forceND=%v: <im2col x, y> = %v, <x, col2im y> = %v", i, forceND, lhs, rhs)
			}
		}
		g.ForceND = false
	}
}

func TestGeometryValidate(t *testing.T) {
	good := geometry(1, []int{5, 5}, []int{3, 3}, []int{0, 0}, []int{1, 1}, []int{1, 1})
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []*ConvGeometry{
		{Channels: 1, In: []int{5}, Out: []int{3}, Kernel: []int{3, 3}, Pad: []int{0}, Stride: []int{1}, Dilation: []int{1}},
		{Channels: 1, In: []int{5}, Out: []int{3}, Kernel: []int{3}, Pad: []int{0}, Stride: []int{0}, Dilation: []int{1}},
		{Channels: 1, In: []int{5}, Out: []int{4}, Kernel: []int{3}, Pad: []int{0}, Stride: []int{1}, Dilation: []int{1}},
		{Channels: 1, In: make([]int, 7), Out: make([]int, 7), Kernel: make([]int, 7), Pad: make([]int, 7), Stride: make([]int, 7), Dilation: make([]int, 7)},
	}
	for i, g := range bad {
		if g.Validate() == nil {
			t.Errorf("bad geometry %d validated", i)
		}
	}
}

// The 2-D im2col and col2im against the general N-D code on random
// geometries: strides, dilations and pads larger than the kernel, windows
// partly or wholly in the padding, rows shorter and longer than a vector
// (the row kernels' masked tails), in float64 and float32.
func TestIm2col2DAgainstND(t *testing.T) {
	rng := NewRNG(7)
	for trial := range 600 {
		width := 1 + rng.IntN(9)
		if trial%2 == 1 {
			width = 1 + rng.IntN(45)
		}
		g := ConvGeometry{Channels: 1 + rng.IntN(3), In: []int{1 + rng.IntN(9), width},
			Kernel: []int{1 + rng.IntN(4), 1 + rng.IntN(4)}, Pad: []int{rng.IntN(5), rng.IntN(5)},
			Stride: []int{1 + rng.IntN(3), 1 + rng.IntN(3)}, Dilation: []int{1 + rng.IntN(3), 1 + rng.IntN(3)}}
		if trial%3 == 0 {
			g.Stride[1], g.Dilation[1] = 1, 1 // the row kernels' case
		}
		g.Out = make([]int, 2)
		ok := true
		for a := range 2 {
			g.Out[a] = ConvOutputSize(g.In[a], g.Kernel[a], g.Pad[a], g.Stride[a], g.Dilation[a])
			ok = ok && g.Out[a] > 0
		}
		if !ok {
			continue
		}
		im := make([]float64, g.ImSize())
		RngUniform(len(im), -1, 1, im, rng)
		checkIm2col2D(t, trial, g, im)
		im32 := make([]float32, len(im))
		for i, v := range im {
			im32[i] = float32(v)
		}
		checkIm2col2D(t, trial, g, im32)
		checkLD(t, trial, g, im32, 1+rng.IntN(3))
		checkRows(t, trial, g, im, rng.IntN(g.Out[0]), rng.IntN(g.Out[0]))
	}
}

// checkRows holds Im2colRows and Col2imRowsAdd to Im2col and Col2im: the
// columns of the output rows of each of the pieces [0, a), [a, b) and
// [b, rows) (those not empty), in a buffer with a spare column a row,
// equal Im2col's exactly, and the pieces' Col2imRowsAdd sum to Col2im's
// image (exactly: small integers).
func checkRows(t *testing.T, trial int, g ConvGeometry, im []float64, a, b int) {
	t.Helper()
	want := make([]float64, g.ColSize())
	Im2col(im, &g, want)
	oh, ow, kd := g.Out[0], g.Out[1], g.KernelDim()
	ints := make([]float64, len(want))
	for i := range ints {
		ints[i] = float64(i%7 - 3)
	}
	wantIm := make([]float64, g.ImSize())
	Col2im(ints, &g, wantIm)
	a, b = min(a, b), max(a, b)
	gotIm := make([]float64, g.ImSize())
	for _, r := range [][2]int{{0, a}, {a, b}, {b, oh}} {
		r0, r1 := r[0], r[1]
		if r0 == r1 {
			continue
		}
		ld := (r1-r0)*ow + 1
		col := make([]float64, (kd-1)*ld+(r1-r0)*ow)
		for i := range col {
			col[i] = 99
		}
		Im2colRows(im, &g, col, ld, r0, r1)
		for k := range kd {
			for q := range (r1 - r0) * ow {
				if got, w := col[k*ld+q], want[k*oh*ow+r0*ow+q]; got != w {
					t.Fatalf("trial %d %+v rows [%d, %d): column row %d position %d: %v, want %v", trial, g, r0, r1, k, q, got, w)
				}
			}
			if k < kd-1 && col[k*ld+ld-1] != 99 {
				t.Fatalf("trial %d %+v rows [%d, %d): the spare column of row %d written", trial, g, r0, r1, k)
			}
		}
		for k := range kd {
			copy(col[k*ld:k*ld+(r1-r0)*ow], ints[k*oh*ow+r0*ow:])
		}
		Col2imRowsAdd(col, ld, &g, gotIm, r0, r1)
	}
	for i := range gotIm {
		if gotIm[i] != wantIm[i] {
			t.Fatalf("trial %d %+v pieces %d, %d: image %d: %v, want %v", trial, g, a, b, i, gotIm[i], wantIm[i])
		}
	}
}

// checkLD holds Im2colLD and Col2imLD to Im2col and Col2im: the columns
// of image j of images, placed at column j*out of rows images*out apart,
// equal Im2col's exactly, the other images' columns are left alone, and
// Col2imLD of them gives Col2im's image exactly (the same sums in the
// same order).
func checkLD(t *testing.T, trial int, g ConvGeometry, im []float32, images int) {
	t.Helper()
	out, rowsN := prod(g.Out), g.KernelDim()
	ld := images * out
	want := make([]float32, g.ColSize())
	Im2col(im, &g, want)
	wide := make([]float32, rowsN*ld)
	for i := range wide {
		wide[i] = 9
	}
	j := images - 1
	Im2colLD(im, &g, wide[j*out:], ld)
	for r := range rowsN {
		for p := range ld {
			got, exp := wide[r*ld+p], float32(9)
			if p >= j*out && p < (j+1)*out {
				exp = want[r*out+p-j*out]
			}
			if got != exp {
				t.Fatalf("trial %d %+v: Im2colLD row %d column %d = %v, want %v", trial, g, r, p, got, exp)
			}
		}
	}
	back, backLD := make([]float32, g.ImSize()), make([]float32, g.ImSize())
	Col2im(want, &g, back)
	for i := range backLD {
		backLD[i] = 5 // poison: Col2imLD overwrites
	}
	Col2imLD(wide[j*out:], ld, &g, backLD)
	for i := range back {
		if back[i] != backLD[i] {
			t.Fatalf("trial %d %+v: Col2imLD element %d = %v, want %v", trial, g, i, backLD[i], back[i])
		}
	}
}

// checkIm2col2D compares the 2-D and N-D im2col of im exactly, and their
// col2im (whose sums may be taken in another order).
func checkIm2col2D[T Float](t *testing.T, trial int, g ConvGeometry, im []T) {
	t.Helper()
	col2D, colND := make([]T, g.ColSize()), make([]T, g.ColSize())
	for i := range col2D {
		col2D[i], colND[i] = 9, 9 // every element must be written
	}
	Im2col(im, &g, col2D)
	nd := g
	nd.ForceND = true
	Im2col(im, &nd, colND)
	for i := range col2D {
		if col2D[i] != colND[i] {
			t.Fatalf("trial %d %+v %T: im2col element %d = %v, N-D gives %v", trial, g, im, i, col2D[i], colND[i])
		}
	}
	back2D, backND := make([]T, g.ImSize()), make([]T, g.ImSize())
	Col2im(colND, &g, back2D)
	Col2im(colND, &nd, backND)
	for i := range back2D {
		if math.Abs(float64(back2D[i]-backND[i])) > 1e-5 {
			t.Fatalf("trial %d %+v %T: col2im element %d = %v, N-D gives %v", trial, g, im, i, back2D[i], backND[i])
		}
	}
}

// TestIm2colPartsMakeIm2col checks that Im2colPart over any cut of a 2-D
// geometry's pieces writes what Im2col writes, and only its own rows:
// strides 1, 2 and 4, padding, dilation, 3 channels of a 7x7 kernel.
func TestIm2colPartsMakeIm2col(t *testing.T) {
	geos := []*ConvGeometry{
		geometry(3, []int{29, 31}, []int{7, 7}, []int{3, 3}, []int{2, 2}, []int{1, 1}),
		geometry(3, []int{27, 27}, []int{11, 11}, []int{0, 0}, []int{4, 4}, []int{1, 1}),
		geometry(4, []int{9, 40}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}),
		geometry(2, []int{7, 9}, []int{3, 2}, []int{1, 0}, []int{2, 1}, []int{1, 2}),
	}
	for gi, g := range geos {
		if !g.Batchable() {
			t.Fatalf("geometry %d is not 2-D", gi)
		}
		im := randSlice[float32](g.ImSize(), -1, 1, uint64(gi+1))
		want := make([]float32, g.ColSize())
		Im2col(im, g, want)
		units, rowLen := g.Im2colUnits(), g.Kernel[1]*prod(g.Out)
		for _, cut := range [][]int{{0, units}, {0, 1, units}, {0, units / 2, units - 1, units}} {
			got := make([]float32, g.ColSize())
			for i := range got {
				got[i] = float32(math.NaN()) // unwritten rows stay NaN
			}
			for p := 0; p+1 < len(cut); p++ {
				Im2colPart(im, g, got, cut[p], cut[p+1])
				for i, v := range got[cut[p+1]*rowLen:] {
					if v == v && p+2 < len(cut) {
						t.Fatalf("geometry %d, cut %v: piece %d wrote past its rows (element %d)", gi, cut, p, cut[p+1]*rowLen+i)
					}
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("geometry %d, cut %v: column element %d = %v, Im2col's %v", gi, cut, i, got[i], want[i])
				}
			}
		}
	}
}
