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

// 16-bit storage (FLOAT16, BFLOAT16) of float values: to_S rounds a float
// to nearest even, from_S is exact; S is f16 or bf16.
typedef unsigned short half16;

__device__ __forceinline__ half16 to_f16(float f) {
  half16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float from_f16(half16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
// Round to nearest even on the upper half; a NaN stays a (quiet) NaN
// rather than rounding into infinity.
__device__ __forceinline__ half16 to_bf16(float f) {
  uint32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (half16)((u >> 16) | 0x40u);
  return (half16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float from_bf16(half16 h) { return __uint_as_float(((uint32)h) << 16); }

