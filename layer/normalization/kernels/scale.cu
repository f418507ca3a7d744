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

// Each kernel is instantiated for every storage of the activations (x, y,
// dy, dx; common.cuh's storage policies): the 16-bit ones for the engine
// in a 16-bit type compute in float, with the scale, the bias and their
// sums in FP32. scale_backward_data: dx = dy * s[c] (dx may be dy).
#define SCALE(P, S)                                                                              \
  extern "C" __global__ void scale_forward_##S(int n, int dim, int inner, const P::E *x,        \
                                               const P::T *s, const P::T *b, P::E *y,            \
                                               P::E *save) {                                     \
    KERNEL_LOOP(i, n) {                                                                          \
      int c = ((int)i / inner) % dim; /* n is an int: 32-bit division */                         \
      P::E e = x[i];                                                                             \
      if (save) save[i] = e;                                                                     \
      P::T r = P::ld(e) * s[c];                                                                  \
      if (b) r += b[c];                                                                          \
      y[i] = P::st(r);                                                                           \
    }                                                                                            \
  }                                                                                              \
  extern "C" __global__ void scale_param_sums_##S(int outer, int dim, int inner, const P::E *dy, \
                                                  const P::E *x, P::T *db, P::T *ds) {           \
    __shared__ P::T sb[SCALE_SUM_THREADS];                                                       \
    __shared__ P::T ss[SCALE_SUM_THREADS];                                                       \
    int c = blockIdx.x;                                                                          \
    P::T accB = 0, accS = 0;                                                                     \
    long long per = (long long)outer * inner;                                                    \
    for (long long k = threadIdx.x; k < per; k += blockDim.x) {                                  \
      long long o = k / inner, j = k % inner;                                                    \
      long long idx = (o * dim + c) * inner + j;                                                 \
      P::T g = P::ld(dy[idx]);                                                                   \
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
                                                     const P::T *s, P::E *dx) {                  \
    KERNEL_LOOP(i, n) {                                                                          \
      int c = ((int)i / inner) % dim;                                                            \
      dx[i] = P::st(P::ld(dy[i]) * s[c]);                                                        \
    }                                                                                            \
  }
ALL_STORAGES(SCALE)
