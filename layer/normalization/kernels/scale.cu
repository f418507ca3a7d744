// Scale's fused passes (one learnable scale, optional bias): element i of
// x (outer x dim x inner) pairs with channel c = (i / inner) % dim.
//
// scale_forward: y = x * s[c] (+ b[c]), also saving x first when save is
// not null (in place, the backward pass needs x): one pass instead of a
// copy, a product and a bias pass.
//
// scale_param_sums: one block per channel c adds the sum over outer and
// inner of dy (to db[c], when db is not null) and of dy * x (to ds[c],
// when ds is not null), reading dy and x once for both. Launched with
// SCALE_SUM_THREADS threads per block.

#define SCALE_SUM_THREADS 256

#define SCALE(T, S)                                                                          \
  extern "C" __global__ void scale_forward_##S(int n, int dim, int inner, const T *x,        \
                                               const T *s, const T *b, T *y, T *save) {      \
    KERNEL_LOOP(i, n) {                                                                      \
      int c = ((int)i / inner) % dim; /* n is an int: 32-bit division */                     \
      T v = x[i];                                                                            \
      if (save) save[i] = v;                                                                 \
      T r = v * s[c];                                                                        \
      if (b) r += b[c];                                                                      \
      y[i] = r;                                                                              \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void scale_param_sums_##S(int outer, int dim, int inner, const T *dy, \
                                                  const T *x, T *db, T *ds) {                \
    __shared__ T sb[SCALE_SUM_THREADS];                                                      \
    __shared__ T ss[SCALE_SUM_THREADS];                                                      \
    int c = blockIdx.x;                                                                      \
    T accB = 0, accS = 0;                                                                    \
    long long per = (long long)outer * inner;                                                \
    for (long long k = threadIdx.x; k < per; k += blockDim.x) {                              \
      long long o = k / inner, j = k % inner;                                                \
      long long idx = (o * dim + c) * inner + j;                                             \
      T g = dy[idx];                                                                         \
      accB += g;                                                                             \
      if (ds) accS += g * x[idx];                                                            \
    }                                                                                        \
    sb[threadIdx.x] = accB;                                                                  \
    ss[threadIdx.x] = accS;                                                                  \
    __syncthreads();                                                                         \
    for (int w = blockDim.x / 2; w > 0; w /= 2) {                                            \
      if (threadIdx.x < w) {                                                                 \
        sb[threadIdx.x] += sb[threadIdx.x + w];                                              \
        ss[threadIdx.x] += ss[threadIdx.x + w];                                              \
      }                                                                                      \
      __syncthreads();                                                                       \
    }                                                                                        \
    if (threadIdx.x == 0) {                                                                  \
      if (db) db[c] += sb[0];                                                                \
      if (ds) ds[c] += ss[0];                                                                \
    }                                                                                        \
  }
BOTH_TYPES(SCALE)

// The same passes on 16-bit activations (the engine in a 16-bit type),
// computed in float with the parameters and their sums in FP32, and
// scale_backward_data: dx = dy * s[c] (dx may be dy).
#define SCALE_HALF(P, S)                                                                         \
  extern "C" __global__ void scale_forward_##S(int n, int dim, int inner, const P::E *x,        \
                                               const float *s, const float *b, P::E *y,          \
                                               P::E *save) {                                     \
    KERNEL_LOOP(i, n) {                                                                          \
      int c = ((int)i / inner) % dim;                                                            \
      P::E e = x[i];                                                                             \
      if (save) save[i] = e;                                                                     \
      float r = P::ld(e) * s[c];                                                                 \
      if (b) r += b[c];                                                                          \
      y[i] = P::st(r);                                                                           \
    }                                                                                            \
  }                                                                                              \
  extern "C" __global__ void scale_param_sums_##S(int outer, int dim, int inner, const P::E *dy, \
                                                  const P::E *x, float *db, float *ds) {         \
    __shared__ float sb[SCALE_SUM_THREADS];                                                      \
    __shared__ float ss[SCALE_SUM_THREADS];                                                      \
    int c = blockIdx.x;                                                                          \
    float accB = 0, accS = 0;                                                                    \
    long long per = (long long)outer * inner;                                                    \
    for (long long k = threadIdx.x; k < per; k += blockDim.x) {                                  \
      long long o = k / inner, j = k % inner;                                                    \
      long long idx = (o * dim + c) * inner + j;                                                 \
      float g = P::ld(dy[idx]);                                                                  \
      accB += g;                                                                                 \
      if (ds) accS += g * P::ld(x[idx]);                                                         \
    }                                                                                            \
    sb[threadIdx.x] = accB;                                                                      \
    ss[threadIdx.x] = accS;                                                                      \
    __syncthreads();                                                                             \
    for (int w = blockDim.x / 2; w > 0; w /= 2) {                                                \
      if (threadIdx.x < w) {                                                                     \
        sb[threadIdx.x] += sb[threadIdx.x + w];                                                  \
        ss[threadIdx.x] += ss[threadIdx.x + w];                                                  \
      }                                                                                          \
      __syncthreads();                                                                           \
    }                                                                                            \
    if (threadIdx.x == 0) {                                                                      \
      if (db) db[c] += sb[0];                                                                    \
      if (ds) ds[c] += ss[0];                                                                    \
    }                                                                                            \
  }                                                                                              \
  extern "C" __global__ void scale_backward_data_##S(int n, int dim, int inner, const P::E *dy, \
                                                     const float *s, P::E *dx) {                 \
    KERNEL_LOOP(i, n) {                                                                          \
      int c = ((int)i / inner) % dim;                                                            \
      dx[i] = P::st(P::ld(dy[i]) * s[c]);                                                        \
    }                                                                                            \
  }
HALF_STORAGES(SCALE_HALF)
