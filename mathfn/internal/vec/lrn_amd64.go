//go:build amd64 && !purego

package vec

import "unsafe"

//go:noescape
func lrnScaleF32AVX512(x, sum, y unsafe.Pointer, n int, alpha, k float32, form int)

//go:noescape
func lrnScaleF32AVX2(x, sum, y unsafe.Pointer, n int, alpha, k float32, form int)

// LRNScalePrefix sets y[i] = x[i] / (k + alpha*sum[i])^beta in float32
// (the product rounded, then the sum; correctly rounded square roots,
// product and quotient, as LRNScale's Go loop in mathfn computes them, bit
// for bit) for as many whole vectors as x holds, beta 0.75, 0.5 or 1,
// and returns how many values it did; the caller does the rest.
func LRNScalePrefix(x, sum, y []float32, alpha, k float32, beta float64) int {
	var form int
	switch beta {
	case 0.75:
		form = negPow075
	case 0.5:
		form = negPow05
	case 1:
		form = negPow1
	default:
		return 0
	}
	if !lrnVector {
		return 0
	}
	step := 16
	if lrnAVX2 {
		step = 8
	}
	n := len(x) / step * step
	if n == 0 {
		return 0
	}
	_, _ = sum[n-1], y[n-1]
	if lrnAVX2 {
		lrnScaleF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&sum[0]), unsafe.Pointer(&y[0]), n, alpha, k, form)
	} else {
		lrnScaleF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&sum[0]), unsafe.Pointer(&y[0]), n, alpha, k, form)
	}
	return n
}
