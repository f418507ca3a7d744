package mathfn

import (
	"runtime"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Epilogue is what GemmEpilogue applies to each element of C once its
// product is complete: C[i][j] = act(C[i][j] + RowBias[i] + ColBias[j]),
// with act a ReLU (leaky with Slope) where ReLU is set. The product's
// tiles take it while they are still in the L1 cache, so that a
// convolution's bias and activation cost no pass over its output of their
// own.
type Epilogue[T Float] struct {
	RowBias, ColBias []T // nil: none
	ReLU             bool
	Slope            T
}

// GemmEpilogue computes C = ep(alpha*op(A)*op(B) + beta*C), as Gemm, on
// GOMAXPROCS goroutines; a nil ep is Gemm.
func GemmEpilogue[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T, ep *Epilogue[T]) {
	gemmEpPacked(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, b, beta, c, ep)
}

// GemmEpilogueSerial is GemmEpilogue on the calling goroutine alone.
func GemmEpilogueSerial[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T, ep *Epilogue[T]) {
	gemmEpPacked(1, transA, transB, m, n, k, alpha, a, b, beta, c, ep)
}

func gemmEpPacked[T Float](workers int, transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T, ep *Epilogue[T]) {
	lda, ldb := k, n
	if transA != blas.NoTrans {
		lda = m
	}
	if transB != blas.NoTrans {
		ldb = k
	}
	gemmEpOn(workers, settings.GEMMAuto, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, n, ep)
}

// apply applies the epilogue to rows [i0, i1) and columns [j0, j1) of c
// (row stride ldc); a nil e does nothing.
func (e *Epilogue[T]) apply(c []T, ldc, i0, i1, j0, j1 int) {
	if e == nil {
		return
	}
	if e.ColBias == nil && (!e.ReLU || e.Slope == 0) && epilogueRows(c, ldc, i0, i1, j0, j1, e.RowBias, e.ReLU) {
		return
	}
	e.applyGo(c, ldc, i0, i1, j0, j1)
}

// applyGo is apply in Go alone (the reference of the vector kernels).
func (e *Epilogue[T]) applyGo(c []T, ldc, i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		var rb T
		if e.RowBias != nil {
			rb = e.RowBias[i]
		}
		if e.ColBias != nil {
			cb := e.ColBias[j0:j1]
			for q := range row {
				row[q] += rb + cb[q]
			}
			rb = 0
		}
		if e.ReLU {
			epilogueReLU(row, rb, e.Slope)
		} else if e.RowBias != nil && e.ColBias == nil { // even a zero, as Caffe's bias product adds it (-0 + 0 is +0)
			for q := range row {
				row[q] += rb
			}
		}
	}
}

// epilogueReLU computes row = relu(row + bias) with Caffe's ReLU:
// max(x, 0) + slope*min(x, 0).
func epilogueReLU[T Float](row []T, bias, slope T) {
	if slope == 0 {
		for q, v := range row {
			v += bias
			if !(v > 0) && v == v { // NaN stays NaN, as max(NaN, 0) does not
				v = 0
			}
			row[q] = v
		}
		return
	}
	for q, v := range row {
		v += bias
		if v < 0 {
			v *= slope
		}
		row[q] = v
	}
}

// gemvShaped reports whether an epilogue's product is a matrix-vector
// product (one row or one column of C) that the packed kernels would
// compute with mostly empty tiles, packing all of the other operand: an
// inner product or a 1x1 convolution at batch 1. Where the CPU has a dot
// kernel for the shape (useDot) that runs instead.
func gemvShaped[T Float](choice settings.GEMM, transA, transB blas.Transpose, m, n, k int) bool {
	if m != 1 && n != 1 || !ownGemmFor[T](choice) {
		return false
	}
	kern := kernelOf[T]()
	dot := kern.dot != nil && transA == blas.NoTrans && transB != blas.NoTrans && m <= dotRows && n >= 4 && k >= dotMinK
	return !dot
}

// gemvProduct adds alpha*op(A)*op(B) to C where C has one row or one
// column (gemvShaped), as matrix-vector products over parts of C on up to
// workers goroutines: at batch 1 an inner product reads its weights once
// and does little else, and one core alone does not draw the memory's
// bandwidth.
func gemvProduct[T Float](workers int, transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	size := max(m, n)
	parts := 1
	if 2*float64(m)*float64(n)*float64(k) >= gemmParallelFlops {
		parts = min(workers, size/64)
	}
	if parts <= 1 {
		gemvPart(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	// In chunks over the pool's helpers (parallel.go): a goroutine
	// started per part ran 70 us late on the 2-vCPU machine, its share of
	// the weights read by no one meanwhile.
	g := listOf[T, gemvJob[float32], gemvJob[float64], gemvJob[T]](&sgemvJobs, &dgemvJobs).get()
	*g = gemvJob[T]{transA: transA, transB: transB, m: m, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, body: g.body}
	if g.body == nil {
		g.body = g.part // made once per job: a pass allocates nothing
	}
	parallelChunksOn(parts, size, g.body)
	g.a, g.b, g.c = nil, nil, nil // hold no caller's memory in the list
	listOf[T, gemvJob[float32], gemvJob[float64], gemvJob[T]](&sgemvJobs, &dgemvJobs).put(g)
}

// gemvJob is one gemvProduct, read by the goroutines of its parts.
type gemvJob[T Float] struct {
	transA, transB blas.Transpose
	m, k           int
	alpha          T
	a, b, c        []T
	lda, ldb, ldc  int
	body           func(part, lo, hi int)
}

var (
	sgemvJobs freeList[gemvJob[float32]]
	dgemvJobs freeList[gemvJob[float64]]
)

// part computes C's columns (one row) or rows (one column) [lo, hi).
func (g *gemvJob[T]) part(_, lo, hi int) {
	if g.m == 1 { // columns lo..hi of C: of B's
		bs := g.b[lo:]
		if g.transB != blas.NoTrans {
			bs = g.b[lo*g.ldb:]
		}
		gemvPart(g.transA, g.transB, 1, hi-lo, g.k, g.alpha, g.a, g.lda, bs, g.ldb, g.c[lo:], g.ldc)
		return
	}
	as := g.a[lo*g.lda:] // rows lo..hi of C: of op(A)'s
	if g.transA != blas.NoTrans {
		as = g.a[lo:]
	}
	gemvPart(g.transA, g.transB, hi-lo, 1, g.k, g.alpha, as, g.lda, g.b, g.ldb, g.c[lo*g.ldc:], g.ldc)
}

// gemvPart is gemvProduct's product on the calling goroutine.
func gemvPart[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if m == 1 {
		// C's row += alpha * x * op(B), x = op(A)'s row.
		incx := 1
		if transA != blas.NoTrans {
			incx = lda
		}
		if transB != blas.NoTrans { // B stored n x k: C^T = B * x
			gemv(blas.NoTrans, n, k, alpha, b, ldb, a, incx, c, 1)
		} else { // B stored k x n: C^T = B^T * x
			gemv(blas.Trans, k, n, alpha, b, ldb, a, incx, c, 1)
		}
		return
	}
	// C's column (stride ldc) += alpha * op(A) * x, x = op(B)'s column.
	incx := ldb
	if transB != blas.NoTrans {
		incx = 1
	}
	if transA != blas.NoTrans { // A stored k x m
		gemv(blas.Trans, k, m, alpha, a, lda, b, incx, c, ldc)
	} else {
		gemv(blas.NoTrans, m, k, alpha, a, lda, b, incx, c, ldc)
	}
}

// gemv is y += alpha * op(A) * x, A stored r x q with row stride lda.
func gemv[T Float](t blas.Transpose, r, q int, alpha T, a []T, lda int, x []T, incx int, y []T, incy int) {
	switch y := any(y).(type) {
	case []float32:
		blas32.Implementation().Sgemv(t, r, q, float32(alpha), any(a).([]float32), lda, any(x).([]float32), incx, 1, y, incy)
	case []float64:
		blas64.Implementation().Dgemv(t, r, q, float64(alpha), any(a).([]float64), lda, any(x).([]float64), incx, 1, y, incy)
	}
}
