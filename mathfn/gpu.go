package mathfn

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/cuda"
)

//go:embed kernels/math.cu
var mathSource string

//go:embed kernels/im2col.cu
var im2colSource string

// GPU runs Caffe's math_functions (caffe_gpu_*) on a device: cuBLAS for
// BLAS, our kernels for the rest, all queued on the device's compute stream.
// Arguments are device pointers to arrays of T; counts and layouts are as
// for the CPU functions of the same names.
//
// A GPU records the first error and skips every later call, in the manner
// of bufio.Writer, so a sequence of operations needs one check:
//
//	k, err := mathfn.LoadKernels(dev) // once per device: a device context keeps them
//	g := mathfn.NewGPU[float32](dev, k)
//	g.Gemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, b, 0, c)
//	g.AddScalar(m*n, 1, c)
//	if err := g.Err(); err != nil { ... }
//
// A GPU is a small value meant to live on the stack for one sequence, or in
// its user (a layer, a solver) for many, with ResetErr between them.
type GPU[T Float] struct {
	dev  *cuda.Device
	blas *cuda.Blas
	k    *Kernels
	err  error
}

// NewGPU returns a GPU for device d with the kernels k loaded for it by
// LoadKernels. With k nil it is a BLAS-only GPU: cuBLAS and the copies
// work, and the operations that need a kernel of ours fail (Err). Getting
// the device's cuBLAS handle can fail; the error is then reported by Err.
func NewGPU[T Float](d *cuda.Device, k *Kernels) GPU[T] {
	g := GPU[T]{dev: d, k: k}
	g.blas, g.err = d.Blas()
	return g
}

// Err returns the first error of the sequence, or nil.
func (g *GPU[T]) Err() error { return g.err }

// ResetErr clears the recorded error (after getting the cuBLAS handle
// failed, the error stays), so that a long-lived GPU can start a new
// sequence.
func (g *GPU[T]) ResetErr() {
	if g.blas != nil {
		g.err = nil
	}
}

// Device returns the device the operations run on.
func (g *GPU[T]) Device() *cuda.Device { return g.dev }

// kernel names, indexed by kernelID.
type kernelID int

const (
	kSet kernelID = iota
	kAddScalar
	kAdd
	kSub
	kMul
	kDiv
	kAbs
	kExp
	kLog
	kSqr
	kSqrt
	kSign
	kSgnbit
	kPowx
	kRngUniform
	kRngGaussian
	kIm2col2D
	kCol2im2D
	kIm2colND
	kCol2imND
	kIm2col2DBatch
	kCol2im2DBatch
	numKernels
)

var kernelNames = [numKernels]string{"set", "add_scalar", "add", "sub", "mul", "div", "abs", "exp", "log",
	"sqr", "sqrt", "sign", "sgnbit", "powx", "rng_uniform", "rng_gaussian",
	"im2col_2d", "col2im_2d", "im2col_nd", "col2im_nd",
	"im2col_2d_batch", "col2im_2d_batch"}

// Kernels are the math kernels of one device, compiled (or found in the
// device's cache) and resolved once by LoadKernels, so a launch costs no
// lookup: fn[id][0] for float32, fn[id][1] for float64. Whoever owns the
// device's state (a device context) keeps them; GPUs share them.
type Kernels struct {
	fn         [numKernels][2]*cuda.Function
	bernoulli  *cuda.Function
	sgdStep    [2]*cuda.Function
	sgdZero    [2]*cuda.Function
	dotAcc     [2]*cuda.Function
	storeWords *cuda.Function
	// salt, when not null, is a device uint64 that the random number
	// kernels mix into every key (SetRNGSalt).
	salt cuda.DevicePtr
}

// SetRNGSalt makes the random number kernels (RngUniform, RngGaussian,
// RngBernoulli) mix the uint64 at p on the device into the key of every
// pass, read when the kernel runs; the null pointer turns it off. A CUDA
// graph replays its launches with the keys they were recorded with, so the
// solver changes the salt between replays (StoreWords) to draw new numbers
// each iteration.
func (k *Kernels) SetRNGSalt(p cuda.DevicePtr) { k.salt = p }

// LoadKernels compiles the math kernels for d on its first use (see
// cuda.Device.Compile for the caches) and resolves them.
func LoadKernels(d *cuda.Device) (*Kernels, error) {
	// One module: im2col.cu uses math.cu's KERNEL_LOOP and BOTH_TYPES.
	mod, err := d.Compile("mathfn/kernels", mathSource+im2colSource)
	if err != nil {
		return nil, err
	}
	k := &Kernels{}
	for id, name := range kernelNames {
		for t, suffix := range []string{"_f32", "_f64"} {
			if k.fn[id][t], err = mod.Function(name + suffix); err != nil {
				return nil, err
			}
		}
	}
	if k.bernoulli, err = mod.Function("rng_bernoulli"); err != nil {
		return nil, err
	}
	if k.storeWords, err = mod.Function("store_words"); err != nil {
		return nil, err
	}
	for t, suffix := range []string{"_f32", "_f64"} {
		if k.sgdStep[t], err = mod.Function("sgd_step" + suffix); err != nil {
			return nil, err
		}
		if k.sgdZero[t], err = mod.Function("sgd_zero_diffs" + suffix); err != nil {
			return nil, err
		}
		if k.dotAcc[t], err = mod.Function("dot_accumulate" + suffix); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// errNoKernels is the error of a kernel operation on a BLAS-only GPU.
var errNoKernels = errors.New("mathfn: a BLAS-only GPU (NewGPU without Kernels) cannot run kernels")

// kernel returns kernel id for T, or records why there is none.
func (g *GPU[T]) kernel(id kernelID) *cuda.Function {
	if g.k == nil {
		g.err = errNoKernels
		return nil
	}
	return g.k.fn[id][typeIndex[T]()]
}

// threadsPerBlock is Caffe's CAFFE_CUDA_NUM_THREADS.
const threadsPerBlock = 512

// Blocks returns the number of blocks of threadsPerBlock that cover n
// elements (Caffe's CAFFE_GET_BLOCKS).
func Blocks(n int) int { return (n + threadsPerBlock - 1) / threadsPerBlock }

// isF64 reports whether T is float64: the kernel index and BLAS routine.
func isF64[T Float]() bool {
	var z T
	_, ok := any(z).(float64)
	return ok
}

func typeIndex[T Float]() int {
	if isF64[T]() {
		return 1
	}
	return 0
}

// launch runs kernel id over n elements with the given arguments.
func (g *GPU[T]) launch(id kernelID, n int, args *cuda.Args) {
	if g.err != nil || n == 0 {
		return
	}
	f := g.kernel(id)
	if f == nil {
		return
	}
	g.err = f.Launch(cuda.Dim3{X: Blocks(n)}, cuda.Dim3{X: threadsPerBlock}, 0, nil, args)
}

// scalar appends a T argument.
func scalar[T Float](a *cuda.Args, v T) *cuda.Args {
	if isF64[T]() {
		return a.Float64(float64(v))
	}
	return a.Float32(float32(v))
}

func op(t blas.Transpose) cuda.Op {
	if t == blas.NoTrans {
		return cuda.NoTrans
	}
	return cuda.Trans
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C, row-major, as the CPU Gemm.
// cuBLAS is column-major, so it computes C^T = op(B)^T * op(A)^T, which is
// the same memory: Caffe's caffe_gpu_gemm.
func (g *GPU[T]) Gemm(transA, transB blas.Transpose, m, n, k int, alpha T, a, b cuda.DevicePtr, beta T, c cuda.DevicePtr) {
	if g.err != nil || m == 0 || n == 0 {
		return
	}
	lda, ldb := k, n
	if transA != blas.NoTrans {
		lda = m
	}
	if transB != blas.NoTrans {
		ldb = k
	}
	lda, ldb = max(lda, 1), max(ldb, 1)
	if isF64[T]() {
		g.err = g.blas.Dgemm(op(transB), op(transA), n, m, k, float64(alpha), b, ldb, a, lda, float64(beta), c, n)
	} else {
		g.err = g.blas.Sgemm(op(transB), op(transA), n, m, k, float32(alpha), b, ldb, a, lda, float32(beta), c, n)
	}
}

// GemmMixed is Gemm with A, B and C each in its own element type
// (cuda.BlasFloat for float32, or a 16-bit type) and FP32 accumulation:
// the products of layers that store activations in 16 bits.
func (g *GPU[T]) GemmMixed(transA, transB blas.Transpose, m, n, k int, alpha float32, a cuda.DevicePtr, at cuda.BlasType, b cuda.DevicePtr, bt cuda.BlasType, beta float32, c cuda.DevicePtr, ct cuda.BlasType) {
	if g.err != nil || m == 0 || n == 0 {
		return
	}
	lda, ldb := k, n
	if transA != blas.NoTrans {
		lda = m
	}
	if transB != blas.NoTrans {
		ldb = k
	}
	g.err = g.blas.GemmEx(op(transB), op(transA), n, m, k, alpha, b, bt, max(ldb, 1), a, at, max(lda, 1), beta, c, ct, n)
}

// GemmStrided computes, for i < batch, C_i = alpha*op(A_i)*op(B_i) +
// beta*C_i, row-major with leading dimensions lda, ldb and ldc, where
// matrix i of X starts strideX elements after matrix i-1 (0: the same
// matrix for every product): many same-shaped products in one cuBLAS call.
func (g *GPU[T]) GemmStrided(transA, transB blas.Transpose, m, n, k int, alpha T, a cuda.DevicePtr, lda, strideA int, b cuda.DevicePtr, ldb, strideB int, beta T, c cuda.DevicePtr, ldc, strideC, batch int) {
	if g.err != nil || m == 0 || n == 0 || batch == 0 {
		return
	}
	// Column-major, as Gemm: C_i^T = op(B_i)^T * op(A_i)^T.
	if isF64[T]() {
		g.err = g.blas.DgemmStridedBatched(op(transB), op(transA), n, m, k, float64(alpha), b, ldb, strideB, a, lda, strideA, float64(beta), c, ldc, strideC, batch)
	} else {
		g.err = g.blas.SgemmStridedBatched(op(transB), op(transA), n, m, k, float32(alpha), b, ldb, strideB, a, lda, strideA, float32(beta), c, ldc, strideC, batch)
	}
}

// GemmStridedMixed is GemmStrided with A, B and C each in its own element
// type (cuda.BlasFloat for float32, or a 16-bit type) and FP32
// accumulation, as GemmMixed.
func (g *GPU[T]) GemmStridedMixed(transA, transB blas.Transpose, m, n, k int, alpha float32, a cuda.DevicePtr, at cuda.BlasType, lda, strideA int, b cuda.DevicePtr, bt cuda.BlasType, ldb, strideB int, beta float32, c cuda.DevicePtr, ct cuda.BlasType, ldc, strideC, batch int) {
	if g.err != nil || m == 0 || n == 0 || batch == 0 {
		return
	}
	g.err = g.blas.GemmStridedBatchedEx(op(transB), op(transA), n, m, k, alpha, b, bt, ldb, strideB, a, at, lda, strideA, beta, c, ct, ldc, strideC, batch)
}

// Gemv computes y = alpha*op(A)*x + beta*y with A m x n row-major.
func (g *GPU[T]) Gemv(transA blas.Transpose, m, n int, alpha T, a, x cuda.DevicePtr, beta T, y cuda.DevicePtr) {
	if g.err != nil || m == 0 || n == 0 {
		return
	}
	// Row-major A is column-major A^T (n x m): flip the operation.
	t := cuda.Trans
	if transA != blas.NoTrans {
		t = cuda.NoTrans
	}
	if isF64[T]() {
		g.err = g.blas.Dgemv(t, n, m, float64(alpha), a, n, x, 1, float64(beta), y, 1)
	} else {
		g.err = g.blas.Sgemv(t, n, m, float32(alpha), a, n, x, 1, float32(beta), y, 1)
	}
}

// Axpy computes y += alpha*x.
func (g *GPU[T]) Axpy(n int, alpha T, x, y cuda.DevicePtr) {
	if g.err != nil || n == 0 {
		return
	}
	if isF64[T]() {
		g.err = g.blas.Daxpy(n, float64(alpha), x, 1, y, 1)
	} else {
		g.err = g.blas.Saxpy(n, float32(alpha), x, 1, y, 1)
	}
}

// Axpby computes y = alpha*x + beta*y.
func (g *GPU[T]) Axpby(n int, alpha T, x cuda.DevicePtr, beta T, y cuda.DevicePtr) {
	g.Scal(n, beta, y)
	g.Axpy(n, alpha, x, y)
}

// Scal computes x *= alpha.
func (g *GPU[T]) Scal(n int, alpha T, x cuda.DevicePtr) {
	if g.err != nil || n == 0 {
		return
	}
	if isF64[T]() {
		g.err = g.blas.Dscal(n, float64(alpha), x, 1)
	} else {
		g.err = g.blas.Sscal(n, float32(alpha), x, 1)
	}
}

// Scale computes y = alpha*x.
func (g *GPU[T]) Scale(n int, alpha T, x, y cuda.DevicePtr) {
	g.Copy(n, x, y)
	g.Scal(n, alpha, y)
}

// Dot returns x . y; it waits for the result.
func (g *GPU[T]) Dot(n int, x, y cuda.DevicePtr) T {
	if g.err != nil || n == 0 {
		return 0
	}
	if isF64[T]() {
		v, err := g.blas.Ddot(n, x, 1, y, 1)
		g.err = err
		return T(v)
	}
	v, err := g.blas.Sdot(n, x, 1, y, 1)
	g.err = err
	return T(v)
}

// DotAccumulate adds w * (x . y) to acc[0] on the device, without waiting:
// a loss summed where it is computed (one block; meant for short arrays such
// as loss tops).
func (g *GPU[T]) DotAccumulate(n int, x, y cuda.DevicePtr, w T, acc cuda.DevicePtr) {
	if g.err != nil {
		return
	}
	if g.k == nil {
		g.err = errNoKernels
		return
	}
	var args cuda.Args
	scalar(args.Int(n).Ptr(x).Ptr(y), w).Ptr(acc)
	g.err = g.k.dotAcc[typeIndex[T]()].Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 256}, 0, nil, &args)
}

// StoreWords writes up to four 64-bit words to dst on the compute stream,
// in order with the work queued there: scalars that a recorded graph reads
// from the device (a learning rate's bits, an RNG salt). It panics on more
// than four words.
func (g *GPU[T]) StoreWords(dst cuda.DevicePtr, words ...uint64) {
	if len(words) > 4 {
		panic(fmt.Sprintf("mathfn: StoreWords of %d words (at most 4)", len(words)))
	}
	if g.err != nil || len(words) == 0 {
		return
	}
	if g.k == nil {
		g.err = errNoKernels
		return
	}
	var w [4]uint64
	copy(w[:], words)
	var args cuda.Args
	args.Ptr(dst).Int(len(words)).Uint64(w[0]).Uint64(w[1]).Uint64(w[2]).Uint64(w[3])
	g.err = g.k.storeWords.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 32}, 0, nil, &args)
}

// salt returns the RNG salt pointer of the kernels, null without kernels.
func (g *GPU[T]) salt() cuda.DevicePtr {
	if g.k == nil {
		return 0
	}
	return g.k.salt
}

// Asum returns the sum of |x|; it waits for the result.
func (g *GPU[T]) Asum(n int, x cuda.DevicePtr) T {
	if g.err != nil || n == 0 {
		return 0
	}
	if isF64[T]() {
		v, err := g.blas.Dasum(n, x, 1)
		g.err = err
		return T(v)
	}
	v, err := g.blas.Sasum(n, x, 1)
	g.err = err
	return T(v)
}

// Copy copies n elements from x to y on the compute stream.
func (g *GPU[T]) Copy(n int, x, y cuda.DevicePtr) {
	if g.err != nil || n == 0 || x == y {
		return
	}
	var z T
	g.err = g.dev.CopyDtoDAsync(y, x, n*sizeOf(z), g.dev.Stream())
}

func sizeOf[T Float](T) int {
	if isF64[T]() {
		return 8
	}
	return 4
}

// Set sets n elements of y to alpha.
func (g *GPU[T]) Set(n int, alpha T, y cuda.DevicePtr) {
	var a cuda.Args
	g.launch(kSet, n, scalar(a.Int(n), alpha).Ptr(y))
}

// AddScalar computes y += alpha.
func (g *GPU[T]) AddScalar(n int, alpha T, y cuda.DevicePtr) {
	var a cuda.Args
	g.launch(kAddScalar, n, scalar(a.Int(n), alpha).Ptr(y))
}

// VectorThreads is how many threads a kernel taking 16-byte vectors of T
// wants over n elements: one a vector, and at least one per element left
// over (the vector kernels of mathfn and the layers).
func VectorThreads[T Float](n int) int {
	w := 4
	if isF64[T]() {
		w = 2
	}
	return max(n/w, n%w)
}

func (g *GPU[T]) binary(id kernelID, n int, a, b, y cuda.DevicePtr) {
	var args cuda.Args
	threads := n
	if (a|b|y)%16 == 0 { // the kernel's vector path: a thread per 16 bytes
		threads = VectorThreads[T](n)
	}
	g.launch(id, threads, args.Int(n).Ptr(a).Ptr(b).Ptr(y))
}

func (g *GPU[T]) unary(id kernelID, n int, a, y cuda.DevicePtr) {
	var args cuda.Args
	g.launch(id, n, args.Int(n).Ptr(a).Ptr(y))
}

// Add computes y = a + b.
func (g *GPU[T]) Add(n int, a, b, y cuda.DevicePtr) { g.binary(kAdd, n, a, b, y) }

// Sub computes y = a - b.
func (g *GPU[T]) Sub(n int, a, b, y cuda.DevicePtr) { g.binary(kSub, n, a, b, y) }

// Mul computes y = a * b.
func (g *GPU[T]) Mul(n int, a, b, y cuda.DevicePtr) { g.binary(kMul, n, a, b, y) }

// Div computes y = a / b.
func (g *GPU[T]) Div(n int, a, b, y cuda.DevicePtr) { g.binary(kDiv, n, a, b, y) }

// Abs computes y = |a|.
func (g *GPU[T]) Abs(n int, a, y cuda.DevicePtr) { g.unary(kAbs, n, a, y) }

// Exp computes y = e^a.
func (g *GPU[T]) Exp(n int, a, y cuda.DevicePtr) { g.unary(kExp, n, a, y) }

// Log computes y = ln(a).
func (g *GPU[T]) Log(n int, a, y cuda.DevicePtr) { g.unary(kLog, n, a, y) }

// Sqr computes y = a^2.
func (g *GPU[T]) Sqr(n int, a, y cuda.DevicePtr) { g.unary(kSqr, n, a, y) }

// Sqrt computes y = sqrt(a).
func (g *GPU[T]) Sqrt(n int, a, y cuda.DevicePtr) { g.unary(kSqrt, n, a, y) }

// Sign computes y = sign(a) in {-1, 0, 1}.
func (g *GPU[T]) Sign(n int, a, y cuda.DevicePtr) { g.unary(kSign, n, a, y) }

// Sgnbit computes y = 1 where a's sign bit is set, else 0.
func (g *GPU[T]) Sgnbit(n int, a, y cuda.DevicePtr) { g.unary(kSgnbit, n, a, y) }

// Powx computes y = a^b.
func (g *GPU[T]) Powx(n int, a cuda.DevicePtr, b T, y cuda.DevicePtr) {
	var args cuda.Args
	g.launch(kPowx, n, scalar(args.Int(n).Ptr(a), b).Ptr(y))
}

// Offset returns a advanced by n elements of T.
func (g *GPU[T]) Offset(a cuda.DevicePtr, n int) cuda.DevicePtr {
	var z T
	return a.Add(n * sizeOf(z))
}

// Im2col copies the image's patches into the column buffer (see the CPU
// Im2col).
func (g *GPU[T]) Im2col(im cuda.DevicePtr, geo *ConvGeometry, col cuda.DevicePtr) {
	var args cuda.Args
	if geo.use2D() {
		n := geo.Channels * geo.Out[0] * geo.Out[1]
		g.launch(kIm2col2D, n, geo.args2D(args.Int(n).Ptr(im)).Ptr(col))
		return
	}
	n := geo.ColSize()
	g.launch(kIm2colND, n, geo.argsND(args.Int(n).Ptr(im)).Ptr(col))
}

// Im2colBatch writes the im2col of nb images, imStride elements apart, into
// one column buffer whose columns run image by image: entry (row,
// b*outSize + p) is entry (row, p) of image b's own buffer. One GEMM then
// covers the whole batch instead of one small GEMM per image. Only 2-D
// geometries (geo.Batchable) have it.
func (g *GPU[T]) Im2colBatch(im cuda.DevicePtr, imStride, nb int, geo *ConvGeometry, col cuda.DevicePtr) {
	if g.err == nil && !geo.Batchable() {
		g.err = errors.New("mathfn: Im2colBatch needs a 2-D geometry")
		return
	}
	var args cuda.Args
	n := geo.Channels * nb * geo.Out[0] * geo.Out[1]
	args.Int(n).Ptr(im).Int(imStride).Int(nb)
	g.launch(kIm2col2DBatch, n, geo.args2D(&args).Ptr(col))
}

// Col2imBatch is the reverse of Im2colBatch: it sums each image's columns
// back into that image.
func (g *GPU[T]) Col2imBatch(col cuda.DevicePtr, geo *ConvGeometry, nb int, im cuda.DevicePtr, imStride int) {
	if g.err == nil && !geo.Batchable() {
		g.err = errors.New("mathfn: Col2imBatch needs a 2-D geometry")
		return
	}
	var args cuda.Args
	n := nb * geo.ImSize()
	args.Int(n).Ptr(col).Int(nb).Int(geo.Channels)
	g.launch(kCol2im2DBatch, n, geo.args2D(&args).Ptr(im).Int(imStride))
}

// Col2im sums the column buffer back into the image (see the CPU Col2im).
func (g *GPU[T]) Col2im(col cuda.DevicePtr, geo *ConvGeometry, im cuda.DevicePtr) {
	var args cuda.Args
	n := geo.ImSize()
	if geo.use2D() {
		g.launch(kCol2im2D, n, geo.args2D(args.Int(n).Ptr(col)).Ptr(im))
		return
	}
	g.launch(kCol2imND, n, geo.argsND(args.Int(n).Ptr(col)).Ptr(im))
}

// args2D appends the 2-D kernels' geometry arguments.
func (geo *ConvGeometry) args2D(a *cuda.Args) *cuda.Args {
	return a.Int(geo.In[0]).Int(geo.In[1]).Int(geo.Kernel[0]).Int(geo.Kernel[1]).
		Int(geo.Pad[0]).Int(geo.Pad[1]).Int(geo.Stride[0]).Int(geo.Stride[1]).
		Int(geo.Dilation[0]).Int(geo.Dilation[1]).Int(geo.Out[0]).Int(geo.Out[1])
}

// argsND appends the geometry as the kernels' struct ConvGeom, by value.
func (geo *ConvGeometry) argsND(a *cuda.Args) *cuda.Args {
	var p [2 + 6*MaxSpatialAxes]int32
	p[0], p[1] = int32(len(geo.In)), int32(geo.Channels)
	for i, list := range [][]int{geo.In, geo.Out, geo.Kernel, geo.Pad, geo.Stride, geo.Dilation} {
		for a, v := range list {
			p[2+i*MaxSpatialAxes+a] = int32(v)
		}
	}
	return a.Int32s(p[:])
}

var _ Engine[float32, cuda.DevicePtr] = (*GPU[float32])(nil)

// The device generators are counter-based (Philox4x32-10): each call draws
// one 64-bit key from rng, so a seeded rng makes GPU runs reproducible too,
// and element i of the output depends only on that key and i.

// RngUniform fills r with samples from U(a, b). It panics unless a <= b.
func (g *GPU[T]) RngUniform(n int, a, b T, r cuda.DevicePtr, rng *rand.Rand) {
	if a > b {
		panic(fmt.Sprintf("mathfn: RngUniform: a = %v > b = %v", a, b))
	}
	var args cuda.Args
	scalar(scalar(args.Int(n), a), b).Ptr(r).Uint64(rng.Uint64()).Ptr(g.salt())
	g.launch(kRngUniform, n, &args)
}

// RngGaussian fills r with samples from N(mu, sigma^2). It panics unless
// sigma > 0.
func (g *GPU[T]) RngGaussian(n int, mu, sigma T, r cuda.DevicePtr, rng *rand.Rand) {
	if !(sigma > 0) {
		panic(fmt.Sprintf("mathfn: RngGaussian: sigma = %v must be positive", sigma))
	}
	var args cuda.Args
	scalar(scalar(args.Int(n), mu), sigma).Ptr(r).Uint64(rng.Uint64()).Ptr(g.salt())
	g.launch(kRngGaussian, n, &args)
}

// RngBernoulli fills r, an array of uint32, with 1 with probability p and 0
// otherwise. It panics unless 0 <= p <= 1.
func (g *GPU[T]) RngBernoulli(n int, p float64, r cuda.DevicePtr, rng *rand.Rand) {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("mathfn: RngBernoulli: p = %v is not in [0, 1]", p))
	}
	if g.err != nil || n == 0 {
		return
	}
	if g.k == nil {
		g.err = errNoKernels
		return
	}
	var args cuda.Args
	args.Int(n).Float64(p).Ptr(r).Uint64(rng.Uint64()).Ptr(g.salt())
	g.err = g.k.bernoulli.Launch(cuda.Dim3{X: Blocks(n)}, cuda.Dim3{X: threadsPerBlock}, 0, nil, &args)
}
