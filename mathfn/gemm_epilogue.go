package mathfn

import (
	"runtime"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
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
		} else if rb != 0 {
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
