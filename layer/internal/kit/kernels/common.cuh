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


// Storage policies for kernels templated on how an array of activations is
// stored: P::E is the stored element, P::T the type computed in, P::ld
// reads an element as T and P::st rounds a T back. The 16-bit ones compute
// in float. ALL_STORAGES instantiates MACRO(P, S) for each, with the
// suffix the Go side looks up: T's for the native types, the 16-bit
// type's then the Go element type's (kit.Reduced.Suffix, then "_f32").
struct StoreF32 {
  typedef float T;
  typedef float E;
  __device__ static __forceinline__ float ld(float v) { return v; }
  __device__ static __forceinline__ float st(float v) { return v; }
};
struct StoreF64 {
  typedef double T;
  typedef double E;
  __device__ static __forceinline__ double ld(double v) { return v; }
  __device__ static __forceinline__ double st(double v) { return v; }
};
struct StoreF16 {
  typedef float T;
  typedef half16 E;
  __device__ static __forceinline__ float ld(half16 v) { return from_f16(v); }
  __device__ static __forceinline__ half16 st(float v) { return to_f16(v); }
};
struct StoreBF16 {
  typedef float T;
  typedef half16 E;
  __device__ static __forceinline__ float ld(half16 v) { return from_bf16(v); }
  __device__ static __forceinline__ half16 st(float v) { return to_bf16(v); }
};
#define ALL_STORAGES(MACRO) \
  MACRO(StoreF32, f32) MACRO(StoreF64, f64) MACRO(StoreF16, f16_f32) MACRO(StoreBF16, bf16_f32)
#define HALF_STORAGES(MACRO) MACRO(StoreF16, f16_f32) MACRO(StoreBF16, bf16_f32)

// unpack8 reads 8 consecutive 16-bit values of P (16 bytes, aligned) as
// floats, and pack8 rounds 8 floats into them: the channels-last kernels
// move a position's 8 channels a load.
template <typename P>
__device__ __forceinline__ void unpack8(const uint4 &v, float *o) {
  const half16 *h = (const half16 *)&v;
#pragma unroll
  for (int k = 0; k < 8; k++) o[k] = P::ld(h[k]);
}

template <typename P>
__device__ __forceinline__ uint4 pack8(const float *o) {
  uint4 v;
  half16 *h = (half16 *)&v;
#pragma unroll
  for (int k = 0; k < 8; k++) h[k] = P::st(o[k]);
  return v;
}
