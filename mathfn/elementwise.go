package mathfn

import "math"

// binaryOp names an element-wise operation of two arrays, for the vector
// kernels (elementwise_amd64.s: AVX-512, float32, whole vectors;
// elementwise_arm64.s: NEON, float32 and float64; the rest, and other
// CPUs, in Go).
type binaryOp int

const (
	opAdd binaryOp = iota
	opSub
	opMul
	opDiv
)

// scalarOp names an element-wise operation of an array and scalars, for
// the vector kernels as binaryOp.
type scalarOp int

const (
	opMulScalar scalarOp = iota
	opMulAddScalar
	opAddScaled
)

// MulScalar computes y = a * alpha over n elements: a product each, so a
// NaN stays a NaN even for alpha 0 (unlike Scale, which is BLAS's scal).
func MulScalar[T Float](n int, alpha T, a, y []T) {
	a, y = a[:n], y[:n]
	for i := scalarPrefix(opMulScalar, n, a, alpha, 0, y); i < n; i++ {
		y[i] = a[i] * alpha
	}
}

// MulAddScalar computes y = a * alpha + beta over n elements, each product
// rounded before the sum.
func MulAddScalar[T Float](n int, alpha, beta T, a, y []T) {
	a, y = a[:n], y[:n]
	for i := scalarPrefix(opMulAddScalar, n, a, alpha, beta, y); i < n; i++ {
		y[i] = T(a[i]*alpha) + beta // T(): rounded, never fused into one operation
	}
}

// AddScaled computes y += a * alpha over n elements, each product rounded
// before the sum: Axpy's arithmetic without BLAS's shortcut for alpha 0.
func AddScaled[T Float](n int, alpha T, a, y []T) {
	a, y = a[:n], y[:n]
	for i := scalarPrefix(opAddScaled, n, a, alpha, 0, y); i < n; i++ {
		y[i] += T(a[i] * alpha)
	}
}

// Add computes y = a + b element-wise over n elements.
func Add[T Float](n int, a, b, y []T) {
	a, b, y = a[:n], b[:n], y[:n]
	for i := binaryPrefix(opAdd, n, a, b, y); i < n; i++ {
		y[i] = a[i] + b[i]
	}
}

// Sub computes y = a - b element-wise over n elements.
func Sub[T Float](n int, a, b, y []T) {
	a, b, y = a[:n], b[:n], y[:n]
	for i := binaryPrefix(opSub, n, a, b, y); i < n; i++ {
		y[i] = a[i] - b[i]
	}
}

// Mul computes y = a * b element-wise over n elements.
func Mul[T Float](n int, a, b, y []T) {
	a, b, y = a[:n], b[:n], y[:n]
	for i := binaryPrefix(opMul, n, a, b, y); i < n; i++ {
		y[i] = a[i] * b[i]
	}
}

// Div computes y = a / b element-wise over n elements.
func Div[T Float](n int, a, b, y []T) {
	a, b, y = a[:n], b[:n], y[:n]
	for i := binaryPrefix(opDiv, n, a, b, y); i < n; i++ {
		y[i] = a[i] / b[i]
	}
}

// AddScalar computes y += alpha over n elements.
func AddScalar[T Float](n int, alpha T, y []T) {
	y = y[:n]
	for i := range y {
		y[i] += alpha
	}
}

// Abs computes y = |a| over n elements.
func Abs[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = T(math.Abs(float64(a[i])))
	}
}

// Exp computes y = e^a over n elements.
func Exp[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = T(math.Exp(float64(a[i])))
	}
}

// Log computes y = ln(a) over n elements.
func Log[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = T(math.Log(float64(a[i])))
	}
}

// Powx computes y = a^b over n elements.
func Powx[T Float](n int, a []T, b T, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = T(math.Pow(float64(a[i]), float64(b)))
	}
}

// Sqr computes y = a^2 over n elements.
func Sqr[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = a[i] * a[i]
	}
}

// Sqrt computes y = sqrt(a) over n elements.
func Sqrt[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		y[i] = T(math.Sqrt(float64(a[i])))
	}
}

// Sign computes y = sign(a) over n elements: -1, 0 or 1 (Caffe's
// caffe_cpu_sign; NaN gives 0).
func Sign[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		switch {
		case a[i] > 0:
			y[i] = 1
		case a[i] < 0:
			y[i] = -1
		default:
			y[i] = 0
		}
	}
}

// Sgnbit computes y = 1 where a's sign bit is set and 0 elsewhere (Caffe's
// caffe_cpu_sgnbit, which tells -0 from +0).
func Sgnbit[T Float](n int, a, y []T) {
	a, y = a[:n], y[:n]
	for i := range y {
		if math.Signbit(float64(a[i])) {
			y[i] = 1
		} else {
			y[i] = 0
		}
	}
}
