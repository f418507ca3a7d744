package cuda

import (
	"errors"
	"fmt"
)

// ErrNoCuDNN is the error of cuDNN calls where cuDNN cannot be used: a
// build without the `cuda` tag, or a machine without libcudnn. The error
// DNN returns says which, and why.
var ErrNoCuDNN = errors.New("cuda: cuDNN is not available")

// DNNType is the element type of cuDNN tensors: Float (float32), Double
// (float64), or a 16-bit type for activations stored in reduced precision
// (Half, BFloat16). The values are cuDNN's cudnnDataType_t.
type DNNType int

// The element types gocaffe uses.
const (
	DNNFloat    DNNType = 0
	DNNDouble   DNNType = 1
	DNNHalf     DNNType = 2 // IEEE binary16 (CUDNN_DATA_HALF)
	DNNBFloat16 DNNType = 9 // bfloat16 (CUDNN_DATA_BFLOAT16)
)

// DNNTypeOf returns the cuDNN type of elements of size bytes (4 or 8).
func DNNTypeOf(size int) DNNType {
	if size == 8 {
		return DNNDouble
	}
	return DNNFloat
}

// Layout is the order in which a tensor of logical dims N, C, spatial...
// is stored.
type Layout int

// The layouts: Caffe's row-major NCHW, and channels-last (NHWC), where a
// pixel's channels are contiguous, which tensor cores want.
const (
	LayoutNCHW Layout = iota
	LayoutNHWC
)

func (l Layout) String() string {
	if l == LayoutNHWC {
		return "NHWC"
	}
	return "NCHW"
}

// Strides returns the element strides of dims (N, C, spatial..., at least
// 3 for NHWC) stored in layout l.
func (l Layout) Strides(dims []int) []int {
	if l != LayoutNHWC || len(dims) < 3 {
		return contiguousStrides(dims)
	}
	s := make([]int, len(dims))
	s[1] = 1
	acc := dims[1]
	for i := len(dims) - 1; i >= 2; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	s[0] = acc
	return s
}

// PoolMode is a cuDNN pooling mode.
type PoolMode int

// The pooling modes of Caffe's MAX and AVE (the average counts the
// padding, as Caffe's does).
const (
	PoolMax     PoolMode = 0
	PoolAverage PoolMode = 1
	// PoolMaxDeterministic is max pooling whose backward pass gives the
	// same bits on every run (CUDNN_POOLING_MAX_DETERMINISTIC).
	PoolMaxDeterministic PoolMode = 3
)

// ActivationMode is a cuDNN activation.
type ActivationMode int

// The activations of Caffe's Sigmoid, ReLU (negative_slope 0) and TanH.
const (
	ActivationSigmoid ActivationMode = 0
	ActivationReLU    ActivationMode = 1
	ActivationTanh    ActivationMode = 2
)

// ConvAlgo is a convolution algorithm chosen for one shape, with the
// workspace bytes it needs. Plan, when not nil, is an execution plan of
// cuDNN's graph API (DNN.ConvFindGraph) that runs the pass instead of the
// legacy algorithm Algo where the call is the one it was built for (its
// alpha and beta, pointers aligned as it assumes); Algo serves the other
// calls, and Workspace covers both.
type ConvAlgo struct {
	Algo      int
	Workspace int
	Plan      *ConvPlan
}

// String names the algorithm for logs: "engine 12" (a graph plan's, by
// cuDNN's global engine index, with the legacy algorithm kept beside it)
// or "algorithm 1".
func (a ConvAlgo) String() string {
	if a.Plan != nil {
		return fmt.Sprintf("engine %d (else algorithm %d)", a.Plan.Engine, a.Algo)
	}
	return fmt.Sprintf("algorithm %d", a.Algo)
}

// ConvPlan is one pass's execution plan of cuDNN's graph API, computing
// y = Alpha * the pass + Beta * y.
type ConvPlan struct {
	Engine      int // cuDNN's global index of the plan's engine
	Workspace   int // bytes
	Alpha, Beta float64
	align       uintptr // the alignment the plan assumes of every pointer
	graph       any     // the cuda build's graph and plan (C memory)
}

// takes says whether the plan computes a call with alpha, beta and these
// pointers.
func (p *ConvPlan) takes(alpha, beta float64, ptrs ...DevicePtr) bool {
	if alpha != p.Alpha || beta != p.Beta {
		return false
	}
	for _, q := range ptrs {
		if uintptr(q)%p.align != 0 {
			return false
		}
	}
	return true
}

// contiguousStrides returns the strides of a packed row-major tensor of
// the dims (at least 4, as cuDNN's descriptors want: missing leading dims
// are 1).
func contiguousStrides(dims []int) []int {
	s := make([]int, len(dims))
	n := 1
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = n
		n *= dims[i]
	}
	return s
}

// BatchNormBuffers are the per-channel device buffers of cuDNN's batch
// normalization (spatial mode, without its affine part), each of C
// elements of the data's type, described by Desc (1 x C x 1 x 1).
type BatchNormBuffers struct {
	Desc        *TensorDesc
	Ones, Zeros DevicePtr // the scale (ones) and bias (zeros) cuDNN applies
	// Mean and Var receive the batch's mean and unbiased variance in the
	// forward pass.
	Mean, Var DevicePtr
	// SaveMean and SaveInvStd carry the forward pass's statistics to the
	// backward pass.
	SaveMean, SaveInvStd DevicePtr
	// DScale and DBias receive the affine part's gradients (unused).
	DScale, DBias DevicePtr
}
