// Declarations of what gocaffe's kernels use from CUDA's headers, for
// check.sh's syntax check with clang (no CUDA toolkit here). Not a
// header of the build: NVRTC compiles the kernels against the real ones.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __attribute__((always_inline)) inline
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
struct double2 { double x, y; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
__device__ float4 make_float4(float, float, float, float);
__device__ double2 make_double2(double, double);
__device__ float2 make_float2(float, float);
__device__ float __shfl_xor_sync(unsigned, float, int);
__device__ double __shfl_xor_sync(unsigned, double, int);
__device__ int __shfl_xor_sync(unsigned, int, int);
__device__ float __shfl_down_sync(unsigned, float, int);
__device__ double __shfl_down_sync(unsigned, double, int);
__device__ float sqrt(float); __device__ double sqrt(double);
__device__ float fma(float, float, float); __device__ double fma(double, double, double);
__device__ float __fmul_rn(float, float); __device__ float __fadd_rn(float, float);
__device__ double __dmul_rn(double, double); __device__ double __dadd_rn(double, double);
__device__ unsigned __float_as_uint(float); __device__ float __uint_as_float(unsigned);
__device__ float exp(float); __device__ double exp(double);
__device__ float log(float); __device__ double log(double);
__device__ float pow(float, float); __device__ double pow(double, double);
__device__ float fabs(float); __device__ double fabs(double);
__device__ float tanh(float); __device__ double tanh(double);
__device__ float expf(float); __device__ float logf(float); __device__ float powf(float, float);
__device__ float rsqrtf(float); __device__ float sqrtf(float); __device__ float fmaxf(float,float); __device__ float fminf(float,float);
__device__ int min(int, int); __device__ int max(int, int);
__device__ float min(float, float); __device__ float max(float, float);
__device__ double min(double, double); __device__ double max(double, double);
__device__ long long min(long long, long long); __device__ long long max(long long, long long);
__device__ void __syncthreads();
__device__ float atomicAdd(float*, float); __device__ double atomicAdd(double*, double);
__device__ float fmaf(float, float, float);
__device__ float round(float); __device__ double round(double);
__device__ float floor(float); __device__ double floor(double);
__device__ float ceil(float); __device__ double ceil(double);
__device__ double nan(const char *); __device__ float nanf(const char *);
__device__ float log1p(float); __device__ double log1p(double);
__device__ float expm1(float); __device__ double expm1(double);
__device__ float fabsf(float);
__device__ bool signbit(float); __device__ bool signbit(double);
__device__ unsigned __umulhi(unsigned, unsigned);
__device__ float cospif(float); __device__ double cospi(double);
__device__ float sqrtf(float); __device__ float logf(float);
__device__ float log1pf(float); __device__ float expm1f(float); __device__ float tanhf(float);
__device__ float floorf(float); __device__ float ceilf(float); __device__ float roundf(float);
__device__ bool isnan(float); __device__ bool isnan(double);
__device__ bool isinf(float); __device__ bool isinf(double);
__device__ float fmax(float, float); __device__ double fmax(double, double);
__device__ float fmin(float, float); __device__ double fmin(double, double);
__device__ float abs(float); __device__ double abs(double);
__device__ float erf(float); __device__ double erf(double);
__device__ float sin(float); __device__ double sin(double);
__device__ float cos(float); __device__ double cos(double);
__device__ float atomicMax(float *, float);
__device__ int atomicAdd(int *, int); __device__ unsigned atomicAdd(unsigned *, unsigned);
__device__ unsigned long long atomicAdd(unsigned long long *, unsigned long long);
__device__ int atomicCAS(int *, int, int); __device__ unsigned long long atomicCAS(unsigned long long *, unsigned long long, unsigned long long);
__device__ long long __double_as_longlong(double); __device__ double __longlong_as_double(long long);
__device__ int __float_as_int(float); __device__ float __int_as_float(int);
__device__ unsigned __ballot_sync(unsigned, int);
__device__ float __shfl_sync(unsigned, float, int); __device__ double __shfl_sync(unsigned, double, int);
__device__ int __shfl_sync(unsigned, int, int);
__device__ void __syncwarp(unsigned = 0xffffffffu);
