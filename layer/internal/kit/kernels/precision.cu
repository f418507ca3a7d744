// Conversions between float32 and the 16-bit types that reduced-precision
// layers store activations in, and the FP32 sums those layers keep.
// Suffixes: _f16 (IEEE binary16), _bf16 (bfloat16); the _f32 after them is
// the element type of the Go side (kit.Launch[float32]).

#define PRECISION(S)                                                                          \
  extern "C" __global__ void narrow_##S##_f32(int n, const float *x, half16 *y) {            \
    KERNEL_LOOP(i, n) { y[i] = to_##S(x[i]); }                                                \
  }                                                                                           \
  extern "C" __global__ void widen_##S##_f32(int n, const half16 *x, float *y) {             \
    KERNEL_LOOP(i, n) { y[i] = from_##S(x[i]); }                                              \
  }                                                                                           \
  /* y += x: a weight gradient computed in 16 bits added to its FP32 diff. */                \
  extern "C" __global__ void accumulate_##S##_f32(int n, const half16 *x, float *y) {        \
    KERNEL_LOOP(i, n) { y[i] += from_##S(x[i]); }                                             \
  }                                                                                           \
  /* y[(i / inner) % dim] is added to y: a bias over channels, in FP32. */                    \
  extern "C" __global__ void add_bias_##S##_f32(int n, int dim, int inner, half16 *y,         \
                                                const float *bias) {                          \
    KERNEL_LOOP(i, n) { y[i] = to_##S(from_##S(y[i]) + bias[(i / inner) % dim]); }            \
  }                                                                                           \
  /* One block per channel c: db[c] += the sum of dy over num images and inner */             \
  /* positions, in FP32 (a bias gradient). */                                                 \
  extern "C" __global__ void bias_grad_##S##_f32(int num, int dim, int inner, const half16 *dy, \
                                                 float *db) {                                 \
    __shared__ float part[512];                                                               \
    int c = blockIdx.x;                                                                       \
    float s = 0;                                                                              \
    for (long long j = threadIdx.x; j < (long long)num * inner; j += blockDim.x) {            \
      long long img = j / inner, pos = j % inner;                                             \
      s += from_##S(dy[(img * dim + c) * inner + pos]);                                       \
    }                                                                                         \
    part[threadIdx.x] = s;                                                                    \
    __syncthreads();                                                                          \
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {                                            \
      if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];                        \
      __syncthreads();                                                                        \
    }                                                                                         \
    if (threadIdx.x == 0) db[c] += part[0];                                                   \
  }
PRECISION(f16)
PRECISION(bf16)

// Channels-last conversions of n images of c channels and s positions:
// per image, row-major is a c x s matrix, channels-last its s x c
// transpose. A block moves a 32 x 32 tile through shared memory, so that
// both the reads and the writes are whole rows of the tile (coalesced); it
// walks the images from blockIdx.z. clTranspose reads x as n matrices of
// rows x cols, calls put(y, at, value) for y's cols x rows ones.
#define CL_TILE 32
template <typename V, typename I, typename O, typename Ld, typename Put>
__device__ void clTranspose(int n, int rows, int cols, const I *x, O *y, Ld ld, Put put) {
  __shared__ V tile[CL_TILE][CL_TILE + 1];
  int c0 = blockIdx.x * CL_TILE, r0 = blockIdx.y * CL_TILE;
  long long per = (long long)rows * cols;
  for (int img = blockIdx.z; img < n; img += gridDim.z) {
    const I *xi = x + img * per;
    O *yi = y + img * per;
    for (int j = threadIdx.y; j < CL_TILE; j += blockDim.y) {
      int r = r0 + j, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[j][threadIdx.x] = ld(xi[(long long)r * cols + c]);
    }
    __syncthreads();
    for (int j = threadIdx.y; j < CL_TILE; j += blockDim.y) {
      int c = c0 + j, r = r0 + threadIdx.x;
      if (c < cols && r < rows) put(yi, (long long)c * rows + r, tile[threadIdx.x][j]);
    }
    __syncthreads();
  }
}
#define PRECISION_CL(S)                                                                        \
  /* y (channels-last, 16 bits) = x (row-major, FP32): per image c x s -> s x c. */            \
  extern "C" __global__ void narrow_cl_##S##_f32(int n, int c, int s, const float *x,          \
                                                 half16 *y) {                                  \
    clTranspose<float>(n, c, s, x, y, [](float v) { return v; },                               \
                       [](half16 *o, long long at, float v) { o[at] = to_##S(v); });           \
  }                                                                                            \
  /* y (row-major, FP32) = x (channels-last, 16 bits): per image s x c -> c x s. */            \
  extern "C" __global__ void widen_cl_##S##_f32(int n, int c, int s, const half16 *x,          \
                                                float *y) {                                    \
    clTranspose<float>(n, s, c, x, y, [](half16 v) { return from_##S(v); },                    \
                       [](float *o, long long at, float v) { o[at] = v; });                    \
  }                                                                                            \
  /* y (row-major, FP32) += x (channels-last, 16 bits): a weight gradient of */                 \
  /* a channels-last convolution added to its diff. */                                          \
  extern "C" __global__ void accumulate_cl_##S##_f32(int n, int c, int s, const half16 *x,     \
                                                     float *y) {                               \
    clTranspose<float>(n, s, c, x, y, [](half16 v) { return from_##S(v); },                    \
                       [](float *o, long long at, float v) { o[at] += v; });                   \
  }
PRECISION_CL(f16)
PRECISION_CL(bf16)

// The same reorderings of 16-bit values, either way (the bits move as
// they are, in either 16-bit type).
extern "C" __global__ void to_cl16_f32(int n, int c, int s, const half16 *x, half16 *y) {
  clTranspose<half16>(n, c, s, x, y, [](half16 v) { return v; }, [](half16 *o, long long at, half16 v) { o[at] = v; });
}
extern "C" __global__ void from_cl16_f32(int n, int c, int s, const half16 *x, half16 *y) {
  clTranspose<half16>(n, s, c, x, y, [](half16 v) { return v; }, [](half16 *o, long long at, half16 v) { o[at] = v; });
}

// A copy of n 16-bit values (a layer that passes its input through).
extern "C" __global__ void copy16_f32(int n, const half16 *x, half16 *y) {
  KERNEL_LOOP(i, n) { y[i] = x[i]; }
}

// Element-wise arithmetic on 16-bit values, computed in float and rounded
// once per result: y = c0*a + c1*b (a Split's summed gradients, an
// Eltwise SUM), y += alpha*x (a third and later term), y = alpha*x (an
// Eltwise SUM's gradient with a coefficient).
#define PRECISION_ARITH(S)                                                                       \
  extern "C" __global__ void sum2_##S##_f32(int n, float c0, const half16 *a, float c1,         \
                                            const half16 *b, half16 *y) {                        \
    KERNEL_LOOP(i, n) { y[i] = to_##S(fmaf(c1, from_##S(b[i]), c0 * from_##S(a[i]))); }         \
  }                                                                                              \
  extern "C" __global__ void axpy_##S##_f32(int n, float alpha, const half16 *x, half16 *y) {   \
    KERNEL_LOOP(i, n) { y[i] = to_##S(fmaf(alpha, from_##S(x[i]), from_##S(y[i]))); }          \
  }                                                                                              \
  extern "C" __global__ void scale_##S##_f32(int n, float alpha, const half16 *x, half16 *y) {  \
    KERNEL_LOOP(i, n) { y[i] = to_##S(alpha * from_##S(x[i])); }                                 \
  }
PRECISION_ARITH(f16)
PRECISION_ARITH(bf16)

// sum2 over 16-byte vectors of eight values (a, b and y aligned to 16
// bytes), the tail one at a time: a Split's summed gradients and an
// Eltwise SUM at the memory's speed.
#define PRECISION_SUM2_VEC(S)                                                                    \
  extern "C" __global__ void sum2_vec_##S##_f32(int n, float c0, const half16 *a, float c1,     \
                                                const half16 *b, half16 *y) {                    \
    int nv = n / 8;                                                                              \
    KERNEL_LOOP(i, nv) {                                                                         \
      uint4 va = ((const uint4 *)a)[i], vb = ((const uint4 *)b)[i], vy;                          \
      const half16 *ea = (const half16 *)&va, *eb = (const half16 *)&vb;                         \
      half16 *ey = (half16 *)&vy;                                                                \
      for (int k = 0; k < 8; k++) ey[k] = to_##S(fmaf(c1, from_##S(eb[k]), c0 * from_##S(ea[k]))); \
      ((uint4 *)y)[i] = vy;                                                                      \
    }                                                                                            \
    KERNEL_LOOP(j, n - nv * 8) {                                                                 \
      long long k = nv * 8 + j;                                                                  \
      y[k] = to_##S(fmaf(c1, from_##S(b[k]), c0 * from_##S(a[k])));                             \
    }                                                                                            \
  }
PRECISION_SUM2_VEC(f16)
PRECISION_SUM2_VEC(bf16)
