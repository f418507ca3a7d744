package mathfn

import (
	"runtime"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
)

// PackedA is the left operand of repeated products, packed once into the
// panels the GEMM kernels read: a layer's weights, multiplied by every
// image of every pass. A product with it skips packing A (for a
// convolution at batch 1, a fifth of its time on AVX2). It holds a as
// given too, for the paths that read A unpacked.
type PackedA[T Float] struct {
	transA bool
	m, k   int
	a      []T
	lda    int
	kern   microKernel[T]
	blocks []T
	off    []int // block (pc/gemmKC, ic/gemmMC) starts at off[pi*nic+ii]
	nic    int
}

// PackA packs op(A), m x k (A stored k x m when transA), for
// GemmPackedEpilogue. a must not change while the result is used.
func PackA[T Float](transA blas.Transpose, m, k int, a []T) *PackedA[T] {
	lda := k
	if transA != blas.NoTrans {
		lda = m
	}
	p := &PackedA[T]{transA: transA != blas.NoTrans, m: m, k: k, a: a, lda: lda, kern: kernelOf[T]()}
	p.nic = (m + gemmMC - 1) / gemmMC
	j := &gemmJob[T]{transA: p.transA, m: m, k: k, alpha: 1, a: a, lda: lda, kern: p.kern}
	mr := p.kern.mr
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			mc := min(gemmMC, m-ic)
			size := (mc + mr - 1) / mr * mr * kc
			at := len(p.blocks)
			p.off = append(p.off, at)
			p.blocks = append(p.blocks, make([]T, size)...)
			j.packA(p.blocks[at:at+size], ic, mc, pc, kc)
		}
	}
	return p
}

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
	if k == 0 || ep != nil && gemvShaped[T](settings.GEMMAuto, ta, transB, m, n, k) || !ownGemmFor[T](settings.GEMMAuto) {
		gemmEpOn(workers, settings.GEMMAuto, ta, transB, m, n, k, 1, pa.a, pa.lda, b, ldb, 0, c, n, ep)
		return
	}
	jobs := listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs)
	j := jobs.get()
	*j = gemmJob[T]{transA: pa.transA, transB: transB != blas.NoTrans, m: m, n: n, k: k,
		alpha: 1, a: pa.a, lda: pa.lda, b: b, ldb: ldb, c: c, ldc: n, kern: pa.kern, own: true, ep: ep, packed: pa}
	j.setOverwrite(0)
	if 2*float64(m)*float64(n)*float64(k) < gemmParallelFlops || workers <= 1 {
		j.run(0, m, 0, n)
	} else {
		j.parallel(workers)
	}
	j.a, j.b, j.c, j.ep, j.packed = nil, nil, nil, nil, nil
	jobs.put(j)
}
