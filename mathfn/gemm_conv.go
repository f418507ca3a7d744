package mathfn

import (
	"fmt"

	"github.com/gocaffe/gocaffe/mathfn/internal/rows"
	"github.com/gocaffe/gocaffe/settings"
)

// A convolution's product without its column buffer. Im2col writes the
// columns of an image (kernel taps x output positions) to memory, and the
// GEMM then reads them back to pack them into its B~ panels: for CIFAR-10
// quick's 5x5 layers, whose columns are 25 times the image, the two copies
// took a third of the forward pass. Here the images are copied once into a
// zero-padded buffer (ConvPanels), and the GEMM packs each B~ panel straight
// from it (GemmConv): in the padded image the positions of one output row
// are evenly spaced for every tap, and the taps of one kernel offset are a
// plane apart, so a panel is a few strided row copies per kernel offset.
// The panels hold what im2col's columns would give packB, value for value:
// the product is the same bit for bit.

// ConvPanels is the right operand of a convolution's product, op(B) = the
// im2col columns of images side by side (image j's positions at columns
// j*positions on), read from zero-padded copies of the images.
type ConvPanels[T Float] struct {
	g              *ConvGeometry
	hp, wp, plane  int // the padded plane: hp x wp
	image          int // elements of a padded image
	positions      int // output positions per image
	images         int
	kernel, offset [2]int // kernel size and dilation, per axis
	padded         []T
	// taps holds the places of the taps of the block being packed,
	// relative to tap 0 (stride 1: tapTable), the greatest in last.
	taps    []int32
	last    int
	tapsFor [2]int // the block of taps (first, count) in taps
	// rows holds a panel's taps along the positions of a block
	// (packTaps).
	rows []T
}

// ConvPanelsOK reports whether GemmConv takes the geometry's products in
// T: 2-D, not forced to the N-D code, on this package's own GEMM (not the
// openblas build's).
func ConvPanelsOK[T Float](g *ConvGeometry) bool {
	return g.use2D() && ownGemmFor[T](settings.GEMMAuto)
}

// ConvPanelsSize is the elements of the padded buffer of images images.
func ConvPanelsSize(g *ConvGeometry, images int) int {
	return images * g.Channels * (g.In[0] + 2*g.Pad[0]) * (g.In[1] + 2*g.Pad[1])
}

// Reset makes p the columns of images images of geometry g (2-D), padded
// into buf (at least ConvPanelsSize elements); SetImage fills them.
func (p *ConvPanels[T]) Reset(g *ConvGeometry, images int, buf []T) {
	if !g.use2D() || len(buf) < ConvPanelsSize(g, images) {
		panic(fmt.Sprintf("mathfn: ConvPanels of %d images in %d elements (2-D: %v)", images, len(buf), g.use2D()))
	}
	p.g, p.images = g, images
	wp, plane := p.wp, p.plane
	kernel, offset := p.kernel, p.offset
	p.hp, p.wp = g.In[0]+2*g.Pad[0], g.In[1]+2*g.Pad[1]
	p.plane = p.hp * p.wp
	p.image = g.Channels * p.plane
	p.positions = g.Out[0] * g.Out[1]
	p.kernel = [2]int{g.Kernel[0], g.Kernel[1]}
	p.offset = [2]int{g.Dilation[0], g.Dilation[1]}
	p.padded = buf[:images*p.image]
	if wp != p.wp || plane != p.plane || kernel != p.kernel || offset != p.offset {
		p.taps = p.taps[:0] // another geometry's places
	}
	if len(p.padded) >= 1<<31 {
		panic("mathfn: ConvPanels of more than 2^31 elements")
	}
}

// Columns is the product's n: the images' output positions.
func (p *ConvPanels[T]) Columns() int { return p.images * p.positions }

// SetImage copies image j (Channels x In) into its padded place.
func (p *ConvPanels[T]) SetImage(j int, im []T) {
	g := p.g
	h, w := g.In[0], g.In[1]
	dst := p.padded[j*p.image : (j+1)*p.image]
	if g.Pad[0] == 0 && g.Pad[1] == 0 {
		copy(dst, im[:g.Channels*h*w])
		return
	}
	clear(dst)
	// A channel's rows with one call (w apart in the image, wp in the
	// buffer).
	for c := range g.Channels {
		src := im[c*h*w : (c+1)*h*w]
		rows.Copy(dst[c*p.plane+g.Pad[0]*p.wp+g.Pad[1]:], src, w, h, p.wp, w)
	}
}

// pack packs steps [pc, pc+kc) (kernel taps) and columns [jc, jc+nc)
// (positions) of the columns into panels of nr columns, as packB packs a
// column buffer: panel q holds, for each step, the nr values of its
// columns (zero past the last column).
func (p *ConvPanels[T]) pack(dst []T, pc, kc, jc, nc, nr int) {
	if p.g.Stride[1] == 1 {
		p.tapTable(pc, kc)
	}
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		cols := min(nr, nc-jr)
		if cols < nr {
			clear(panel)
		}
		// The panel's positions by runs along an output row.
		first := jc + jr
		for q := first; q < first+cols; {
			img, pos := q/p.positions, q%p.positions
			oh, ow := pos/p.g.Out[1], pos%p.g.Out[1]
			n := min(p.g.Out[1]-ow, first+cols-q)
			base := img*p.image + oh*p.g.Stride[0]*p.wp + ow*p.g.Stride[1]
			p.packRun(panel[q-first:], base, n, pc, kc, nr)
			q += n
		}
	}
}

// tapTable sets p.taps to the places of taps [pc, pc+kc) in a padded
// image, relative to tap 0's. The table of the last call is kept: the
// products of a layer's images ask for the same blocks again and again.
func (p *ConvPanels[T]) tapTable(pc, kc int) {
	if p.tapsFor == [2]int{pc, kc} && len(p.taps) == kc {
		return
	}
	p.tapsFor = [2]int{pc, kc}
	k1 := p.kernel[1]
	kk := p.kernel[0] * k1
	p.taps, p.last = p.taps[:0], 0
	c, o := pc/kk, pc%kk
	kh, kw := o/k1, o%k1
	for range kc {
		off := c*p.plane + kh*p.offset[0]*p.wp + kw*p.offset[1]
		p.taps = append(p.taps, int32(off))
		p.last = max(p.last, off)
		if kw++; kw == k1 { // the next tap: along the kernel row, then down, then the next channel
			kw, kh = 0, kh+1
			if kh == p.kernel[0] {
				kh, c = 0, c+1
			}
		}
	}
}

// packRun packs n positions of one output row, whose tap (0, 0, 0) is at
// base in the padded images, for steps [pc, pc+kc) into panel (from the
// run's first column on). With a stride of 1 the positions of a tap are
// contiguous: one copy of the block's taps (p.taps). Otherwise one strided
// copy per kernel offset, over the channels whose tap of that offset lies
// in the block.
func (p *ConvPanels[T]) packRun(panel []T, base, n, pc, kc, nr int) {
	sw := p.g.Stride[1]
	if sw == 1 {
		if base+p.last+n > len(p.padded) || (kc-1)*nr+n > len(panel) {
			panic("mathfn: ConvPanels run out of range")
		}
		rows.CopyOffsets(panel, p.padded[base:], n, nr, p.taps)
		return
	}
	kk := p.kernel[0] * p.kernel[1]
	extent := sw*(n-1) + 1 // elements a source row spans
	for o := range kk {
		t0 := pc + ((o-pc%kk)%kk+kk)%kk // the block's first tap of offset o
		if t0 >= pc+kc {
			continue
		}
		count := (pc+kc-1-t0)/kk + 1
		src := p.padded[base+t0/kk*p.plane+(o/p.kernel[1])*p.offset[0]*p.wp+(o%p.kernel[1])*p.offset[1]:]
		dst := panel[(t0-pc)*nr:]
		if !rows.Fit(len(src), extent, count, p.plane) || !rows.Fit(len(dst), n, count, kk*nr) {
			panic("mathfn: ConvPanels run out of range")
		}
		if sw == 1 {
			rows.Copy(dst, src, n, count, kk*nr, p.plane)
		} else {
			rows.CopyStrided(dst, src, n, count, kk*nr, p.plane, sw)
		}
	}
}

// GemmConv computes C = ep(op(A) * B) on the calling goroutine, A packed
// (PackA, PackAIn; m x the geometry's KernelDim), B the columns of p, C
// m x p.Columns(), ep nil for none: GemmPackedEpilogue of the im2col
// columns, the same products. Only where ConvPanelsOK.
func GemmConv[T Float](pa *PackedA[T], p *ConvPanels[T], c []T, ep *Epilogue[T]) {
	if !ConvPanelsOK[T](p.g) {
		panic("mathfn: GemmConv without this package's GEMM")
	}
	m, n, k := pa.m, p.Columns(), pa.k
	if k != p.g.KernelDim() {
		panic(fmt.Sprintf("mathfn: GemmConv of %d steps on columns of %d", k, p.g.KernelDim()))
	}
	if m == 0 || n == 0 {
		return
	}
	j := listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs).get()
	wake := j.region.wake // kept: a job from the list makes no channel again
	*j = gemmJob[T]{transA: pa.transA, m: m, n: n, k: k, alpha: 1, a: pa.a, lda: pa.lda, ldb: n,
		c: c[:m*n], ldc: n, kern: pa.kern, own: true, ep: ep, packed: pa, panels: p}
	j.region.wake = wake
	j.setOverwrite(0)
	j.run(0, m, 0, n)
	j.free()
}

// packTaps packs steps [pc, pc+kc) (positions) and columns [jc, jc+nc)
// (taps) of the columns transposed into panels of nr columns, as packB
// packs the transposed column buffer of a weight gradient's product: for
// each panel its taps' rows along the block's positions into p.rows
// (a copy per run of positions along an output row), then gather's
// transposing pack of them (a loop where the kernel has none). Stride 1
// along the rows only (ConvPanels.TapsOK).
func (p *ConvPanels[T]) packTaps(dst []T, pc, kc, jc, nc, nr int, gather func(dst, src []T, ld, k, rows, width int, alpha T)) {
	p.rows = grow(p.rows, nr*kc)
	ow := p.g.Out[1]
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		cols := min(nr, nc-jr)
		p.tapTable(jc+jr, cols)
		for q := pc; q < pc+kc; {
			img, pos := q/p.positions, q%p.positions
			n := min(ow-pos%ow, pc+kc-q)
			base := img*p.image + pos/ow*p.g.Stride[0]*p.wp + pos%ow
			if base+p.last+n > len(p.padded) || (cols-1)*kc+q-pc+n > len(p.rows) {
				panic("mathfn: ConvPanels run out of range")
			}
			rows.CopyOffsets(p.rows[q-pc:], p.padded[base:], n, kc, p.taps)
			q += n
		}
		if gather != nil {
			gather(panel, p.rows, kc, kc, cols, nr, 1)
			continue
		}
		for r := range nr {
			for s := range kc {
				v := T(0)
				if r < cols {
					v = p.rows[r*kc+s]
				}
				panel[s*nr+r] = v
			}
		}
	}
}

// TapsOK reports whether GemmConvTaps takes the geometry: ConvPanelsOK,
// and a stride of 1 along the rows (whose positions are then contiguous
// in the padded image).
func TapsOK[T Float](g *ConvGeometry) bool { return ConvPanelsOK[T](g) && g.Stride[1] == 1 }

// GemmConvTaps adds A * B^T to C on the calling goroutine, B the columns
// of p (taps x positions), A m x p.Columns() (rows lda apart), C m x the
// taps: a convolution's weight gradient, Gemm(NoTrans, Trans, ...) of the
// im2col columns with beta 1, without the columns. Only where TapsOK.
func GemmConvTaps[T Float](m int, a []T, lda int, p *ConvPanels[T], c []T) {
	if !TapsOK[T](p.g) {
		panic("mathfn: GemmConvTaps of an unsupported geometry or GEMM")
	}
	n, k := p.g.KernelDim(), p.Columns()
	if m == 0 || n == 0 || k == 0 {
		return
	}
	j := listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs).get()
	wake := j.region.wake // kept: a job from the list makes no channel again
	*j = gemmJob[T]{m: m, n: n, k: k, alpha: 1, a: a, lda: lda, ldb: k,
		c: c[:m*n], ldc: n, kern: kernelOf[T](), own: true, panels: p, panelTaps: true}
	j.region.wake = wake
	j.run(0, m, 0, n)
	j.free()
}
