package mathfn

import (
	"fmt"
	"runtime"

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
//
// With a stride s > 1 along the rows, each padded row is kept as its s
// phases one after another (the columns of index s*i+r at phase r's place
// i): an output row's positions, s columns apart in the image, are then
// contiguous for every tap, and a panel is packed by the same copy of
// whole runs as at stride 1. Copied a kernel offset at a time with a
// strided read, GoogLeNet's conv1 (7x7, stride 2, 3 channels) spent a
// quarter of its product packing.
type ConvPanels[T Float] struct {
	g          *ConvGeometry
	hp, plane  int // the padded plane: hp rows of row elements
	row, phase int // a padded row's elements and its phases' (both the padded width at stride 1)
	image      int // elements of a padded image
	positions  int // output positions per image
	images     int
	padded     []T
	// places holds the place of every tap of the geometry's columns in a
	// padded image, relative to tap 0 (placeOf), for pack: made by
	// Reset, read only by the products, so that goroutines may pack
	// panels of one ConvPanels at once. key is what they depend on.
	places []int32
	key    panelKey
	// taps holds the places of the taps of the block packTaps packs
	// (stride 1: tapTable), the greatest in last.
	taps    []int32
	last    int
	tapsFor [2]int // the block of taps (first, count) in taps
	// rows holds a panel's taps along the positions of a block
	// (packTaps).
	rows []T
}

// panelKey is what the places of the taps in a padded image depend on.
type panelKey struct {
	plane, row, phase, stride int
	kernel, offset            [2]int
}

// ConvPanelsOK reports whether GemmConv takes the geometry's products in
// T: 2-D, not forced to the N-D code, on this package's own GEMM (not the
// openblas build's).
func ConvPanelsOK[T Float](g *ConvGeometry) bool {
	return g.use2D() && ownGemmFor[T](settings.GEMMAuto)
}

// panelRow returns the elements of a padded row of g and of each of its
// phases (the row's stride-th columns).
func panelRow(g *ConvGeometry) (row, phase int) {
	wp, s := g.In[1]+2*g.Pad[1], g.Stride[1]
	phase = (wp + s - 1) / s
	return s * phase, phase
}

// ConvPanelsSize is the elements of the padded buffer of images images.
func ConvPanelsSize(g *ConvGeometry, images int) int {
	row, _ := panelRow(g)
	return images * g.Channels * (g.In[0] + 2*g.Pad[0]) * row
}

// Reset makes p the columns of images images of geometry g (2-D), padded
// into buf (at least ConvPanelsSize elements); SetImage fills them.
func (p *ConvPanels[T]) Reset(g *ConvGeometry, images int, buf []T) {
	if !g.use2D() || len(buf) < ConvPanelsSize(g, images) {
		panic(fmt.Sprintf("mathfn: ConvPanels of %d images in %d elements (2-D: %v)", images, len(buf), g.use2D()))
	}
	p.g, p.images = g, images
	p.hp = g.In[0] + 2*g.Pad[0]
	p.row, p.phase = panelRow(g)
	p.plane = p.hp * p.row
	p.image = g.Channels * p.plane
	p.positions = g.Out[0] * g.Out[1]
	p.padded = buf[:images*p.image]
	if len(p.padded) >= 1<<31 {
		panic("mathfn: ConvPanels of more than 2^31 elements")
	}
	key := panelKey{plane: p.plane, row: p.row, phase: p.phase, stride: g.Stride[1],
		kernel: [2]int{g.Kernel[0], g.Kernel[1]}, offset: [2]int{g.Dilation[0], g.Dilation[1]}}
	if key != p.key {
		p.key = key
		p.taps, p.places = p.taps[:0], p.places[:0] // another geometry's places
	}
	// The places of a geometry of more channels begin with those of
	// fewer (a layer's groups share them).
	if k := g.KernelDim(); len(p.places) < k {
		p.places = p.placesOf(p.places[:0], 0, k)
	}
}

// placesOf appends to dst the places of taps [first, first+count) in a
// padded image, relative to tap 0's: along the kernel row, then down,
// then the next channel.
func (p *ConvPanels[T]) placesOf(dst []int32, first, count int) []int32 {
	k0, k1 := p.key.kernel[0], p.key.kernel[1]
	kk := k0 * k1
	c, o := first/kk, first%kk
	kh, kw := o/k1, o%k1
	for range count {
		dst = append(dst, int32(c*p.plane+kh*p.key.offset[0]*p.row+p.phaseOf(kw*p.key.offset[1])))
		if kw++; kw == k1 {
			kw, kh = 0, kh+1
			if kh == k0 {
				kh, c = 0, c+1
			}
		}
	}
	return dst
}

// phaseOf is where column x of a padded row lies in the buffer's row.
func (p *ConvPanels[T]) phaseOf(x int) int {
	s := p.key.stride
	return x%s*p.phase + x/s
}

// Columns is the product's n: the images' output positions.
func (p *ConvPanels[T]) Columns() int { return p.images * p.positions }

// SetImage copies image j (Channels x In) into its padded place.
func (p *ConvPanels[T]) SetImage(j int, im []T) {
	g := p.g
	h, w := g.In[0], g.In[1]
	dst := p.padded[j*p.image : (j+1)*p.image]
	s := g.Stride[1]
	if g.Pad[0] == 0 && g.Pad[1] == 0 && s == 1 {
		copy(dst, im[:g.Channels*h*w])
		return
	}
	clear(dst)
	for c := range g.Channels {
		src := im[c*h*w : (c+1)*h*w]
		top := dst[c*p.plane+g.Pad[0]*p.row:]
		if s == 1 {
			// A channel's rows with one call (w apart in the image,
			// row in the buffer).
			rows.Copy(top[g.Pad[1]:], src, w, h, p.row, w)
			continue
		}
		// Phase by phase: the image's columns x0, x0+s, ... land at
		// consecutive places of the phase.
		for r := range s {
			x0 := ((r-g.Pad[1])%s + s) % s
			if x0 >= w {
				continue
			}
			n := (w - x0 + s - 1) / s
			d := top[p.phaseOf(x0+g.Pad[1]):]
			if !rows.Fit(len(src)-x0, s*(n-1)+1, h, w) || !rows.Fit(len(d), n, h, p.row) {
				panic("mathfn: ConvPanels image out of range")
			}
			rows.CopyStrided(d, src[x0:], n, h, p.row, w, s)
		}
	}
}

// pack packs steps [pc, pc+kc) (kernel taps) and columns [jc, jc+nc)
// (positions) of the columns into panels of nr columns, as packB packs a
// column buffer: panel q holds, for each step, the nr values of its
// columns (zero past the last column). It writes nothing of p's: several
// goroutines may pack at once.
func (p *ConvPanels[T]) pack(dst []T, pc, kc, jc, nc, nr int) {
	taps := p.places[pc : pc+kc]
	last := int32(0)
	for _, t := range taps {
		last = max(last, t)
	}
	ow := p.g.Out[1]
	rowStep := p.g.Stride[0] * p.row
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		cols := min(nr, nc-jr)
		if cols < nr {
			clear(panel)
		}
		// The panel's positions by runs along an output row, whose
		// places are contiguous for each tap.
		first := jc + jr
		for q := first; q < first+cols; {
			img, pos := q/p.positions, q%p.positions
			n := min(ow-pos%ow, first+cols-q)
			base := img*p.image + pos/ow*rowStep + pos%ow
			if base+int(last)+n > len(p.padded) || (kc-1)*nr+n > len(panel)-(q-first) {
				panic("mathfn: ConvPanels run out of range")
			}
			rows.CopyOffsets(panel[q-first:], p.padded[base:], n, nr, taps)
			q += n
		}
	}
}

// tapTable sets p.taps to the places of taps [pc, pc+kc) in a padded
// image, relative to tap 0's (packTaps). The table of the last call is
// kept: the products of a layer's images ask for the same blocks again
// and again.
func (p *ConvPanels[T]) tapTable(pc, kc int) {
	if p.tapsFor == [2]int{pc, kc} && len(p.taps) == kc {
		return
	}
	p.tapsFor = [2]int{pc, kc}
	p.taps = p.placesOf(p.taps[:0], pc, kc)
	p.last = 0
	for _, t := range p.taps {
		p.last = max(p.last, int(t))
	}
}

// GemmConv computes C = ep(op(A) * B) on the calling goroutine, A packed
// (PackA, PackAIn; m x the geometry's KernelDim), B the columns of p, C
// m x p.Columns(), ep nil for none: GemmPackedEpilogue of the im2col
// columns, the same products. Only where ConvPanelsOK.
func GemmConv[T Float](pa *PackedA[T], p *ConvPanels[T], c []T, ep *Epilogue[T]) {
	gemmConvOn(1, pa, p, c, ep)
}

// GemmConvParallel is GemmConv on up to GOMAXPROCS goroutines, split as
// GemmPackedEpilogue splits its products (a batch of one's convolution,
// by its output positions): the same products, bit for bit.
func GemmConvParallel[T Float](pa *PackedA[T], p *ConvPanels[T], c []T, ep *Epilogue[T]) {
	gemmConvOn(runtime.GOMAXPROCS(0), pa, p, c, ep)
}

func gemmConvOn[T Float](workers int, pa *PackedA[T], p *ConvPanels[T], c []T, ep *Epilogue[T]) {
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
	if workers <= 1 || 2*float64(m)*float64(n)*float64(k) < gemmParallelFlops {
		j.run(0, m, 0, n)
		j.free()
		return
	}
	j.parallel(workers) // frees j
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
			base := img*p.image + pos/ow*p.g.Stride[0]*p.row + pos%ow
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
