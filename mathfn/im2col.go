package mathfn

import (
	"fmt"

	"github.com/gocaffe/gocaffe/mathfn/internal/rows"
)

// MaxSpatialAxes is the most spatial axes an N-D convolution can have here
// (the GPU kernels take the geometry by value in a fixed-size struct).
const MaxSpatialAxes = 6

// ConvGeometry describes how im2col lays out the patches of one image: an
// image of Channels x In[0] x In[1] ... becomes a column buffer of
// (Channels * prod(Kernel)) rows by prod(Out) columns, row (c, k0, k1, ...)
// and column (o0, o1, ...) holding
// image[c][o0*Stride[0] - Pad[0] + k0*Dilation[0]][...], or 0 in the padding.
// The per-axis slices all have one entry per spatial axis.
type ConvGeometry struct {
	Channels                      int
	In, Out                       []int
	Kernel, Pad, Stride, Dilation []int
	// ForceND makes 2-D geometries use the general N-D code, as Caffe's
	// force_nd_im2col (the results are the same).
	ForceND bool
}

// ConvOutputSize returns Caffe's convolution output size for one axis:
// (in + 2*pad - (dilation*(kernel-1) + 1)) / stride + 1.
func ConvOutputSize(in, kernel, pad, stride, dilation int) int {
	return (in+2*pad-(dilation*(kernel-1)+1))/stride + 1
}

// Validate checks that the geometry is consistent: one entry per axis
// everywhere, positive kernel, stride and dilation, and Out matching the
// convolution output size of In.
func (g *ConvGeometry) Validate() error {
	n := len(g.In)
	if n == 0 || n > MaxSpatialAxes {
		return fmt.Errorf("im2col: %d spatial axes, want 1 to %d", n, MaxSpatialAxes)
	}
	for _, s := range [][]int{g.Out, g.Kernel, g.Pad, g.Stride, g.Dilation} {
		if len(s) != n {
			return fmt.Errorf("im2col: geometry has %d spatial axes but a per-axis list of %d", n, len(s))
		}
	}
	for i := range n {
		if g.Kernel[i] <= 0 || g.Stride[i] <= 0 || g.Dilation[i] <= 0 || g.Pad[i] < 0 {
			return fmt.Errorf("im2col: axis %d: kernel %d, stride %d, dilation %d and pad %d must be positive (pad >= 0)", i, g.Kernel[i], g.Stride[i], g.Dilation[i], g.Pad[i])
		}
		if want := ConvOutputSize(g.In[i], g.Kernel[i], g.Pad[i], g.Stride[i], g.Dilation[i]); g.Out[i] != want {
			return fmt.Errorf("im2col: axis %d: output size %d, the input of %d gives %d", i, g.Out[i], g.In[i], want)
		}
	}
	return nil
}

// KernelDim is the number of column rows: Channels * prod(Kernel).
func (g *ConvGeometry) KernelDim() int { return g.Channels * prod(g.Kernel) }

// ColSize is the number of elements of the column buffer.
func (g *ConvGeometry) ColSize() int { return g.KernelDim() * prod(g.Out) }

// ImSize is the number of elements of the image.
func (g *ConvGeometry) ImSize() int { return g.Channels * prod(g.In) }

func prod(v []int) int {
	p := 1
	for _, d := range v {
		p *= d
	}
	return p
}

// use2D reports whether the fast 2-D code applies.
func (g *ConvGeometry) use2D() bool { return len(g.In) == 2 && !g.ForceND }

// Batchable reports whether the GPU's batched im2col (GPU.Im2colBatch)
// handles the geometry: 2-D, not forced to the N-D path.
func (g *ConvGeometry) Batchable() bool { return g.use2D() }

// Im2col copies the image's patches into the column buffer (Caffe's
// im2col_cpu and im2col_nd_cpu).
func Im2col[T Float](im []T, g *ConvGeometry, col []T) {
	if g.use2D() {
		im2col2D(im, g, col, prod(g.Out), 0, g.Out[0])
		return
	}
	imcolND(im, g, col, true)
}

// Col2im sums the column buffer back into the image it was taken from: the
// adjoint of Im2col (Caffe's col2im_cpu and col2im_nd_cpu). The image is
// overwritten.
func Col2im[T Float](col []T, g *ConvGeometry, im []T) {
	clear(im[:g.ImSize()])
	if g.use2D() {
		col2im2D(col, g, im, prod(g.Out), 0, g.Out[0])
		return
	}
	imcolND(col, g, im, false)
}

// Im2colLD is Im2col into a column buffer whose rows are ld elements
// apart (ld at least the output positions): the columns of several images
// side by side, so that one product covers them all (a convolution's
// backward pass over a few images of few positions each). 2-D geometries
// only (Batchable).
func Im2colLD[T Float](im []T, g *ConvGeometry, col []T, ld int) {
	g.checkLD(len(col), ld)
	im2col2D(im, g, col, ld, 0, g.Out[0])
}

// Col2imLD is Col2im from a column buffer whose rows are ld elements
// apart, Im2colLD's adjoint. The image is overwritten.
func Col2imLD[T Float](col []T, ld int, g *ConvGeometry, im []T) {
	g.checkLD(len(col), ld)
	clear(im[:g.ImSize()])
	col2im2D(col, g, im, ld, 0, g.Out[0])
}

// Im2colRows is Im2colLD for the output rows [r0, r1) alone: the columns
// of their positions, rows ld (at least (r1-r0) times the output width)
// apart. A convolution whose columns would not stay in the cache takes an
// image's in pieces of a few rows (ResNet-50's res2 3x3: 7.2 MB an image,
// written and read back from memory by every pass).
func Im2colRows[T Float](im []T, g *ConvGeometry, col []T, ld, r0, r1 int) {
	g.checkRows(len(col), ld, r0, r1)
	im2col2D(im, g, col, ld, r0, r1)
}

// Col2imRowsAdd adds the columns of output rows [r0, r1) (Im2colRows's
// layout) into the image, Im2colRows's adjoint: the image is not cleared
// first, so that the pieces of an image sum into it.
func Col2imRowsAdd[T Float](col []T, ld int, g *ConvGeometry, im []T, r0, r1 int) {
	g.checkRows(len(col), ld, r0, r1)
	col2im2D(col, g, im, ld, r0, r1)
}

// checkRows panics unless the geometry is 2-D, [r0, r1) is a range of its
// output rows and a column buffer of n elements with rows ld apart holds
// their columns.
func (g *ConvGeometry) checkRows(n, ld, r0, r1 int) {
	if !g.use2D() || r0 < 0 || r1 > g.Out[0] || r0 >= r1 || ld < (r1-r0)*g.Out[1] || (g.KernelDim()-1)*ld+(r1-r0)*g.Out[1] > n {
		panic(fmt.Sprintf("mathfn: output rows [%d, %d) in column rows %d apart in %d elements for %d rows of %d (2-D: %v)",
			r0, r1, ld, n, g.KernelDim(), prod(g.Out), g.use2D()))
	}
}

// checkLD panics unless a column buffer of n elements with rows ld apart
// holds the geometry's columns, the geometry being 2-D.
func (g *ConvGeometry) checkLD(n, ld int) {
	out := prod(g.Out)
	if !g.use2D() || ld < out || (g.KernelDim()-1)*ld+out > n {
		panic(fmt.Sprintf("mathfn: column rows %d apart in %d elements for %d rows of %d (2-D: %v)", ld, n, g.KernelDim(), out, g.use2D()))
	}
}

// im2col2D walks the column buffer in order, row (c, ki, kj) by row (rows
// ld apart), so that its writes are sequential. Each output row's columns inside the
// image are one range (validColumns), with zeros on either side for the
// padding; with a column stride of 1 the ranges of all the output rows
// inside the image are copied by one rows.Copy.
func im2col2D[T Float](im []T, g *ConvGeometry, col []T, ld, r0, r1 int) {
	im2col2DUnits(im, g, col, ld, 0, g.Im2colUnits(), r0, r1)
}

// Im2colUnits is the number of pieces Im2colPart cuts a 2-D geometry's
// columns into: a channel's kernel row each (Channels * Kernel[0]).
func (g *ConvGeometry) Im2colUnits() int { return g.Channels * g.Kernel[0] }

// Im2colPart writes the column rows of Im2col that pieces [lo, hi) of
// Im2colUnits give, rows lo*Kernel[1] to hi*Kernel[1], as Im2col writes
// them: the pieces of one image's columns can be written by goroutines
// of their own (a 2-D geometry only: Batchable). A channel's kernel rows
// and not whole channels: the first layer of a net has 3 channels, which
// split over 2 cores as 2 against 1.
func Im2colPart[T Float](im []T, g *ConvGeometry, col []T, lo, hi int) {
	if !g.use2D() || lo < 0 || hi > g.Im2colUnits() || lo > hi {
		panic(fmt.Sprintf("mathfn: Im2colPart of pieces [%d, %d) of %d (2-D: %v)", lo, hi, g.Im2colUnits(), g.use2D()))
	}
	im2col2DUnits(im, g, col, prod(g.Out), lo, hi, 0, g.Out[0])
}

// im2col2DUnits is im2col2D of the rows of units [u0, u1) (unit u is
// channel u / Kernel[0]'s kernel row u % Kernel[0], its Kernel[1] rows)
// and of output rows [r0, r1).
func im2col2DUnits[T Float](im []T, g *ConvGeometry, col []T, ld, u0, u1, r0, r1 int) {
	h, w := g.In[0], g.In[1]
	ow := g.Out[1]
	oh := r1 - r0 // the rows written, output rows r0 on
	sh, sw := g.Stride[0], g.Stride[1]
	kh := g.Kernel[0]
	next := u0 * g.Kernel[1] * ld
	for u := u0; u < u1; u++ {
		c, ki := u/kh, u%kh
		plane := im[c*h*w : (c+1)*h*w]
		// offH: the input row of output row r0 (the buffer's first).
		offH := ki*g.Dilation[0] - g.Pad[0] + r0*sh
		y0, y1 := validColumns(offH, sh, h, oh)
		for kj := range g.Kernel[1] {
			row := col[next : next+oh*ow]
			next += ld
			off := kj*g.Dilation[1] - g.Pad[1] // input column of output column 0
			x0, x1 := validColumns(off, sw, w, ow)
			clear(row[:y0*ow])
			clear(row[y1*ow:])
			if x0 == x1 { // every column is padding
				clear(row)
				continue
			}
			if sw == 1 {
				if y0 == y1 {
					continue
				}
				// The padding columns: on short rows those of all the
				// rows at once, then the image's: one clear beside the
				// copy rather than two clears of a column or two per
				// row, which cost more than the copy there (CIFAR-10
				// quick's conv2). On long rows, where that wrote the
				// columns twice, value by value after the copy.
				pad := x0 > 0 || x1 < ow
				if pad && ow < zeroEndsRow {
					clear(row[y0*ow : y1*ow])
				}
				src := plane[(y0*sh+offH)*w+x0+off:]
				if dst := row[y0*ow+x0:]; rows.Fit(len(src), x1-x0, y1-y0, sh*w) && rows.Fit(len(dst), x1-x0, y1-y0, ow) {
					rows.Copy(dst, src, x1-x0, y1-y0, ow, sh*w)
				} else {
					panic("mathfn: im2col rows out of range")
				}
				if pad && ow >= zeroEndsRow {
					zeroEnds(row[y0*ow:y1*ow], ow, x0, x1)
				}
				continue
			}
			if y0 < y1 && x0 < x1 {
				// Every sw-th column of the rows at once (stride 2:
				// the first layers of GoogLeNet and ResNet-50,
				// ResNet-50's stride-2 1x1 convolutions; 4:
				// CaffeNet's conv1), the padding columns around them.
				if x0 > 0 || x1 < ow {
					zeroEnds(row[y0*ow:y1*ow], ow, x0, x1)
				}
				src := plane[(y0*sh+offH)*w+x0*sw+off:]
				dst := row[y0*ow+x0:]
				if n := x1 - x0; rows.Fit(len(src), sw*(n-1)+1, y1-y0, sh*w) && rows.Fit(len(dst), n, y1-y0, ow) {
					rows.CopyStrided(dst, src, n, y1-y0, ow, sh*w, sw)
				} else {
					panic("mathfn: im2col rows out of range")
				}
				continue
			}
			for y := y0; y < y1; y++ {
				out := row[y*ow : (y+1)*ow]
				if x0 > 0 {
					clear(out[:x0])
				}
				if x1 < ow {
					clear(out[x1:])
				}
				src := plane[(y*sh+offH)*w : (y*sh+offH+1)*w]
				for x, ix := x0, x0*sw+off; x < x1; x, ix = x+1, ix+sw {
					out[x] = src[ix]
				}
			}
		}
	}
}

// zeroEndsRow is the shortest output row whose padding columns im2col
// zeroes after the copy (zeroEnds), not before it with the rest.
const zeroEndsRow = 32

// zeroEnds sets columns [0, x0) and [x1, ow) of each row of m (rows of ow
// values) to zero, a few values a row, in a loop of stores (not clear's
// calls).
func zeroEnds[T Float](m []T, ow, x0, x1 int) {
	for r := 0; r+ow <= len(m); r += ow {
		row := m[r : r+ow]
		for i := 0; i < x0; i++ {
			row[i] = 0
		}
		for i := x1; i < ow; i++ {
			row[i] = 0
		}
	}
}

// validColumns returns the output columns [x0, x1) whose input column
// x*stride + off lies inside an image width wide, for ow output columns.
func validColumns(off, stride, width, ow int) (x0, x1 int) {
	if off < 0 {
		x0 = (-off + stride - 1) / stride
	}
	if last := width - 1 - off; last >= 0 {
		x1 = min(ow, last/stride+1)
	}
	x0 = min(x0, ow)
	return x0, max(x1, x0)
}

// col2im2D is im2col2D with the copy reversed into a sum.
func col2im2D[T Float](col []T, g *ConvGeometry, im []T, ld, r0, r1 int) {
	if g.Stride[1] != 1 {
		col2im2DStrided(col, g, im, ld, r0, r1)
		return
	}
	h, w := g.In[0], g.In[1]
	ow := g.Out[1]
	oh := r1 - r0
	sh := g.Stride[0]
	next := 0
	for c := range g.Channels {
		plane := im[c*h*w : (c+1)*h*w]
		for ki := range g.Kernel[0] {
			offH := ki*g.Dilation[0] - g.Pad[0] + r0*sh
			y0, y1 := validColumns(offH, sh, h, oh)
			for kj := range g.Kernel[1] {
				row := col[next : next+oh*ow]
				next += ld
				off := kj*g.Dilation[1] - g.Pad[1]
				x0, x1 := validColumns(off, 1, w, ow)
				if x0 == x1 || y0 == y1 {
					continue
				}
				dst, src := plane[(y0*sh+offH)*w+x0+off:], row[y0*ow+x0:]
				if !rows.Fit(len(dst), x1-x0, y1-y0, sh*w) || !rows.Fit(len(src), x1-x0, y1-y0, ow) {
					panic("mathfn: col2im rows out of range")
				}
				rows.Add(dst, src, x1-x0, y1-y0, sh*w, ow)
			}
		}
	}
}

// col2im2DStrided is col2im2D for a column stride above 1.
func col2im2DStrided[T Float](col []T, g *ConvGeometry, im []T, ld, r0, r1 int) {
	h, w := g.In[0], g.In[1]
	ow := g.Out[1]
	oh := r1 - r0
	sw := g.Stride[1]
	next := 0
	for c := range g.Channels {
		plane := im[c*h*w : (c+1)*h*w]
		for ki := range g.Kernel[0] {
			for kj := range g.Kernel[1] {
				row := col[next : next+oh*ow]
				next += ld
				off := kj*g.Dilation[1] - g.Pad[1]
				x0, x1 := validColumns(off, sw, w, ow)
				for y := range oh {
					iy := (y+r0)*g.Stride[0] - g.Pad[0] + ki*g.Dilation[0]
					if iy < 0 || iy >= h || x0 == x1 {
						continue
					}
					dst := plane[iy*w : (iy+1)*w]
					in := row[y*ow : (y+1)*ow]
					for x, ix := x0, x0*sw+off; x < x1; x, ix = x+1, ix+sw {
						dst[ix] += in[x]
					}
				}
			}
		}
	}
}

// imcolND is the N-D im2col (toCol) and col2im (!toCol): for every column
// row (c, k...) and column position (o...), it maps the image element at
// o*stride - pad + k*dilation on each axis, skipping the padding.
func imcolND[T Float](src []T, g *ConvGeometry, dst []T, toCol bool) {
	n := len(g.In)
	kernelSize := prod(g.Kernel)
	outSize := prod(g.Out)
	var k, o [MaxSpatialAxes]int // kernel offset and output position, per axis
	for row := range g.KernelDim() {
		c := row / kernelSize
		rem := row % kernelSize
		for a := n - 1; a >= 0; a-- {
			k[a] = rem % g.Kernel[a]
			rem /= g.Kernel[a]
		}
		clear(o[:n])
		for pos := range outSize {
			imIndex, inside := c, true
			for a := range n {
				x := o[a]*g.Stride[a] - g.Pad[a] + k[a]*g.Dilation[a]
				inside = inside && x >= 0 && x < g.In[a]
				imIndex = imIndex*g.In[a] + x
			}
			colIndex := row*outSize + pos
			switch {
			case toCol && inside:
				dst[colIndex] = src[imIndex]
			case toCol:
				dst[colIndex] = 0
			case inside:
				dst[imIndex] += src[colIndex]
			}
			// Advance o like an odometer, last axis fastest.
			for a := n - 1; a >= 0; a-- {
				if o[a]++; o[a] < g.Out[a] {
					break
				}
				o[a] = 0
			}
		}
	}
}
