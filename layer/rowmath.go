package layer

// The row operations of the host's broadcasts (Scale, Bias, Eltwise SUM):
// one factor, or a factor and a term, applied to a row of values; whole
// vectors through the AVX-512 kernels where the CPU has them
// (rowmath_amd64.s), the rest in Go, with the same rounding (a product is
// rounded before it is added) either way. x and y have one length and
// may be the same slice.

// rowMin is the shortest row worth a call of the row operations: shorter
// rows (one value each, after an InnerProduct) are cheaper in the
// caller's own loop.
const rowMin = 16

// mulRow sets y = x * f.
func mulRow[T Float](x, y []T, f T) {
	y = y[:len(x)]
	k := 0
	if k = rowVectorPrefix(x); k > 0 {
		mulRowVector(x, y, k, f)
	}
	for i := k; i < len(x); i++ {
		y[i] = x[i] * f
	}
}

// mulAddRow sets y = x * f + b.
func mulAddRow[T Float](x, y []T, f, b T) {
	y = y[:len(x)]
	k := 0
	if k = rowVectorPrefix(x); k > 0 {
		mulAddRowVector(x, y, k, f, b)
	}
	for i := k; i < len(x); i++ {
		y[i] = T(x[i]*f) + b // T(): rounded, never fused into one operation
	}
}

// axpyRow sets y += x * f.
func axpyRow[T Float](x, y []T, f T) {
	y = y[:len(x)]
	k := 0
	if k = rowVectorPrefix(x); k > 0 {
		axpyRowVector(x, y, k, f)
	}
	for i := k; i < len(x); i++ {
		y[i] += T(x[i] * f)
	}
}
