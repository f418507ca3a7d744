package cuda

import "errors"

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
// workspace bytes it needs.
type ConvAlgo struct {
	Algo      int
	Workspace int
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
