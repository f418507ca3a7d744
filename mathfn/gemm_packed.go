package mathfn

import (
	"runtime"
	"sync"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
)

// PackedA is the left operand of repeated products, packed once into the
// panels the GEMM kernels read: a layer's weights, multiplied by every
// image of every pass. A product with it skips packing A (for a
// convolution at batch 1, a fifth of its time on AVX2).
//
// The few products that read A unpacked (matrix-vector shapes, the linked
// BLAS of the openblas build, dot kernels) read the matrix PackA was
// given. PackAScaled and NewWinograd keep no such matrix (it would be a
// second copy of the weights beside the packed one, a folded ResNet-50's
// 92 MB): there the first such product unpacks the panels into one, once
// (source).
type PackedA[T Float] struct {
	transA bool
	m, k   int
	a      []T // as given to PackA; nil where source derives it
	lda    int
	kern   microKernel[T]
	blocks []T
	off    []int // block (pc/gemmKC, ic/gemmMC) starts at off[pi*nic+ii]
	nic    int

	// derive says a is not kept: source unpacks the panels into unpacked
	// on first use.
	derive   bool
	once     sync.Once
	unpacked []T

	// PackAIn's packing, its blocks spread over the cores: the job that
	// packs them and packBlocks as a method value, made once.
	packJob  gemmJob[T]
	packPart func(part, lo, hi int)
	// PackConvFlippedIn's: the weights while it packs, their inputs and
	// taps, and packFlippedBlocks as a method value, made once.
	flipW             []T
	flipCin, flipTaps int
	flipPart          func(part, lo, hi int)
}

// packAInParallelMin is the least size (m*k) whose PackAIn spreads its
// blocks over the cores: a training pass packs all of a layer's weights
// on the calling goroutine before each of its passes, ResNet-50's 25M
// weights twice a pass (about 60 ms of one core, the other idle, at
// batch 8 on a Zen 4 EPYC).
const packAInParallelMin = 1 << 16

// packBlocks packs blocks [lo, hi) of p (in the order of p.off: by block
// of k, then of rows) with p.packJob.
func (p *PackedA[T]) packBlocks(_, lo, hi int) {
	for b := lo; b < hi; b++ {
		pc, ic := b/p.nic*gemmKC, b%p.nic*gemmMC
		p.packJob.packA(p.blocks[p.off[b]:], ic, min(gemmMC, p.m-ic), pc, min(gemmKC, p.k-pc))
	}
}

// newPackedA lays out the panels of op(A), m x k, in one allocation (a
// net packs all its weights once: growing one slice would leave as much
// again behind as garbage), not yet filled.
func newPackedA[T Float](transA bool, m, k int) *PackedA[T] {
	lda := k
	if transA {
		lda = m
	}
	p := &PackedA[T]{transA: transA, m: m, k: k, lda: lda, kern: kernelOf[T]()}
	p.nic = (m + gemmMC - 1) / gemmMC
	mr := p.kern.mr
	size := 0
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			mc := min(gemmMC, m-ic)
			p.off = append(p.off, size)
			size += (mc + mr - 1) / mr * mr * kc
		}
	}
	p.blocks = make([]T, size)
	return p
}

// PackedASize is the number of elements of the panels of op(A), m x k, a
// PackAIn needs.
func PackedASize[T Float](m, k int) int {
	mr := kernelOf[T]().mr
	size := 0
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			size += (min(gemmMC, m-ic) + mr - 1) / mr * mr * kc
		}
	}
	return size
}

// PackAIn is PackA into p (a new PackedA where p is nil), its panels in
// blocks (at least PackedASize elements, which p holds until the next
// PackAIn): for a left operand packed again and again, a layer's weights
// for each training pass (they change between passes), with no
// allocation once p has seen the largest shape.
func PackAIn[T Float](p *PackedA[T], transA blas.Transpose, m, k int, a, blocks []T) *PackedA[T] {
	p = p.layout(transA != blas.NoTrans, m, k, a, blocks)
	p.packJob = gemmJob[T]{transA: p.transA, m: m, k: k, alpha: 1, a: a, lda: p.lda, kern: p.kern}
	if p.packPart == nil {
		p.packPart = p.packBlocks
	}
	p.fill(p.packPart)
	p.packJob.a = nil
	return p
}

// layout readies p (a new PackedA where p is nil) for the panels of op(A),
// m x k, in blocks, not yet filled; a is what the products that read A
// unpacked read.
func (p *PackedA[T]) layout(transA bool, m, k int, a, blocks []T) *PackedA[T] {
	if p == nil {
		p = &PackedA[T]{}
	}
	lda := k
	if transA {
		lda = m
	}
	p.transA, p.m, p.k, p.a, p.lda, p.kern = transA, m, k, a, lda, kernelOf[T]()
	p.derive, p.unpacked = false, nil
	p.nic = (m + gemmMC - 1) / gemmMC
	mr := p.kern.mr
	p.off = p.off[:0]
	size := 0
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			p.off = append(p.off, size)
			size += (min(gemmMC, m-ic) + mr - 1) / mr * mr * kc
		}
	}
	p.blocks = blocks[:size]
	return p
}

// fill packs p's blocks with part (blocks [lo, hi) in the order of p.off),
// on the cores where A is large.
func (p *PackedA[T]) fill(part func(part, lo, hi int)) {
	if p.m*p.k >= packAInParallelMin {
		Parallel(len(p.off), part)
	} else {
		part(0, 0, len(p.off))
	}
}

// PackConvFlippedIn is PackAIn (not transposed) of the weights of a
// convolution's bottom gradient taken as a convolution of the top
// gradient: the cin x cout*taps matrix whose row ci holds at cout place
// co*taps+t the weight of output co and input ci at tap taps-1-t (the
// kernel flipped in space), packed straight from the layer's weights w
// (cout x cin x taps) rather than from a flipped copy. The copy, written
// a tap run at a time cin*taps*cout apart and then gathered again by the
// packing, cost ResNet-50's training pass about 1% on two Zen 4 cores.
// p keeps no unpacked matrix: only the products that read the panels
// alone (GemmConv) may take it.
func PackConvFlippedIn[T Float](p *PackedA[T], cin, cout, taps int, w, blocks []T) *PackedA[T] {
	p = p.layout(false, cin, cout*taps, nil, blocks)
	p.flipW, p.flipCin, p.flipTaps = w, cin, taps
	if p.flipPart == nil {
		p.flipPart = p.packFlippedBlocks
	}
	p.fill(p.flipPart)
	p.flipW = nil
	return p
}

// packFlippedBlocks packs blocks [lo, hi) of PackConvFlippedIn's panels
// from p.flipW. A panel's mr rows (inputs) at one output are mr runs of
// taps weights side by side in w, so each step reads a few cache lines
// that the next steps read too.
func (p *PackedA[T]) packFlippedBlocks(_, lo, hi int) {
	mr, cin, taps, w := p.kern.mr, p.flipCin, p.flipTaps, p.flipW
	for b := lo; b < hi; b++ {
		pc, ic := b/p.nic*gemmKC, b%p.nic*gemmMC
		mc, kc := min(gemmMC, p.m-ic), min(gemmKC, p.k-pc)
		dst := p.blocks[p.off[b]:]
		for ir := 0; ir < mc; ir += mr {
			panel := dst[ir*kc : ir*kc+mr*kc]
			rows := min(mr, mc-ir)
			if rows < mr {
				clear(panel)
			}
			co, t := pc/taps, pc%taps
			for q := range kc {
				src := w[(co*cin+ic+ir)*taps+taps-1-t:]
				out := panel[q*mr : q*mr+rows]
				for r := range out {
					out[r] = src[r*taps]
				}
				if t++; t == taps {
					co, t = co+1, 0
				}
			}
		}
	}
}

// PackA packs op(A), m x k (A stored k x m when transA), for
// GemmPackedEpilogue. a must not change while the result is used: the
// products that read A unpacked read it.
func PackA[T Float](transA blas.Transpose, m, k int, a []T) *PackedA[T] {
	p := newPackedA[T](transA != blas.NoTrans, m, k)
	p.a = a
	j := &gemmJob[T]{transA: p.transA, m: m, k: k, alpha: 1, a: a, lda: p.lda, kern: p.kern}
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			j.packA(p.block(ic, pc), ic, min(gemmMC, m-ic), pc, kc)
		}
	}
	return p
}

// PackAScaled packs A, m x k and not transposed, with row i multiplied by
// scale[i] (nil: by 1): each value is T(float64(a) * scale[i]), what a
// scaled copy of A would hold, so that products give what they give with
// PackA of that copy. It is an inference fold's weights (a convolution's
// times the BatchNorm and Scale after it) packed straight from the
// layer's own, and keeps no unpacked copy (PackedA); a is not read after.
func PackAScaled[T Float](m, k int, a []T, scale []float64) *PackedA[T] {
	p := newPackedA[T](false, m, k)
	p.derive = true
	p.packRows(0, m, a, k, scale)
	return p
}

// packRows packs rows [r0, r0+n) of A (not transposed; src holds them, ld
// apart, from its start) into p's panels, row i times scale[i-r0] where
// scale is not nil. Each panel must come from one call: r0 is a multiple
// of the kernel's mr, and r0+n one too or m.
func (p *PackedA[T]) packRows(r0, n int, src []T, ld int, scale []float64) {
	mr := p.kern.mr
	j := &gemmJob[T]{m: n, k: p.k, alpha: 1, a: src, lda: ld, kern: p.kern}
	for pc := 0; pc < p.k; pc += gemmKC {
		kc := min(gemmKC, p.k-pc)
		for ic := r0 / gemmMC * gemmMC; ic < r0+n; ic += gemmMC {
			lo, hi := max(ic, r0), min(ic+gemmMC, r0+n, p.m)
			dst := p.block(ic, pc)[(lo-ic)*kc:]
			j.packA(dst, lo-r0, hi-lo, pc, kc)
			if scale == nil {
				continue
			}
			for i := lo; i < hi; i++ {
				s, r := scale[i-r0], (i-ic)%mr
				panel := dst[(i-lo)/mr*mr*kc:]
				for q := range kc {
					panel[q*mr+r] = T(float64(panel[q*mr+r]) * s)
				}
			}
		}
	}
}

// source returns op(A) unpacked, as the products that do not read the
// panels take it: what PackA was given, or where nothing was kept the
// panels unpacked into a matrix m x k (made on the first call, once, and
// kept: such a product recurs with every pass).
func (p *PackedA[T]) source() (transA blas.Transpose, a []T, lda int) {
	if !p.derive {
		if p.transA {
			return blas.Trans, p.a, p.lda
		}
		return blas.NoTrans, p.a, p.lda
	}
	p.once.Do(func() {
		u := make([]T, p.m*p.k)
		mr := p.kern.mr
		for pc := 0; pc < p.k; pc += gemmKC {
			kc := min(gemmKC, p.k-pc)
			for ic := 0; ic < p.m; ic += gemmMC {
				blk := p.block(ic, pc)
				for i := ic; i < min(ic+gemmMC, p.m); i++ {
					panel, r := blk[(i-ic)/mr*mr*kc:], (i-ic)%mr
					row := u[i*p.k+pc : i*p.k+pc+kc]
					for q := range row {
						row[q] = panel[q*mr+r]
					}
				}
			}
		}
		p.unpacked = u
	})
	return blas.NoTrans, p.unpacked, p.k
}

// OwnsUnpacked reports whether p holds an unpacked copy of A of its own
// beside the panels: one source derived, as a product that reads A
// unpacked needs (what PackA was given is the caller's, not a copy).
func (p *PackedA[T]) OwnsUnpacked() bool { return p.unpacked != nil }

// block returns the packed block at rows ic and steps pc.
func (p *PackedA[T]) block(ic, pc int) []T {
	return p.blocks[p.off[(pc/gemmKC)*p.nic+ic/gemmMC]:]
}

// GemmPackedEpilogue computes C = ep(op(A)*op(B)), C m x n, A packed by
// PackA: GemmEpilogue with alpha 1 and beta 0. serial keeps it on the
// calling goroutine.
func GemmPackedEpilogue[T Float](pa *PackedA[T], transB blas.Transpose, n int, b []T, c []T, ep *Epilogue[T], serial bool) {
	m, k := pa.m, pa.k
	if m == 0 || n == 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if serial {
		workers = 1
	}
	ldb := n
	if transB != blas.NoTrans {
		ldb = k
	}
	ta := blas.NoTrans
	if pa.transA {
		ta = blas.Trans
	}
	if k == 0 {
		gemmEpOn(workers, settings.GEMMAuto, ta, transB, m, n, k, 1, nil, pa.lda, b, ldb, 0, c, n, ep)
		return
	}
	if ep != nil && gemvShaped[T](settings.GEMMAuto, ta, transB, m, n, k) || !ownGemmFor[T](settings.GEMMAuto) {
		ta, a, lda := pa.source()
		gemmEpOn(workers, settings.GEMMAuto, ta, transB, m, n, k, 1, a, lda, b, ldb, 0, c, n, ep)
		return
	}
	j := listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs).get()
	wake := j.region.wake // kept: a job from the list makes no channel again
	*j = gemmJob[T]{transA: pa.transA, transB: transB != blas.NoTrans, m: m, n: n, k: k,
		alpha: 1, a: pa.a, lda: pa.lda, b: b, ldb: ldb, c: c, ldc: n, kern: pa.kern, own: true, ep: ep, packed: pa}
	j.region.wake = wake
	if pa.derive && j.useDot() {
		// The dot kernels read A unpacked.
		var ta blas.Transpose
		ta, j.a, j.lda = pa.source()
		j.transA = ta != blas.NoTrans
	}
	j.setOverwrite(0)
	if 2*float64(m)*float64(n)*float64(k) < gemmParallelFlops || workers <= 1 {
		j.run(0, m, 0, n)
		j.free()
		return
	}
	j.parallel(workers) // frees j
}
