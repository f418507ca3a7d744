// Prepended to every layer kernel file before NVRTC compiles it.

typedef unsigned int uint32;
typedef unsigned long long uint64;

// Grid-stride loop over n elements, as Caffe's CUDA_KERNEL_LOOP.
#define KERNEL_LOOP(i, n)                                              \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)blockDim.x * gridDim.x)

// Instantiates MACRO for float (suffix _f32) and double (_f64); the Go side
// looks kernels up by name plus suffix.
#define BOTH_TYPES(MACRO) MACRO(float, f32) MACRO(double, f64)
