// Eltwise MAX. The forward kernel runs once per bottom after the first:
// with first set it compares bottoms 0 and 1 (a tie goes to bottom 1, as
// Caffe's CPU code), afterwards the running maximum y against bottom idx,
// which must be strictly greater to win. The mask holds the winner's index.

template <typename T>
__device__ void eltwise_max_forward(int n, const T *a, const T *b, int idx, int first, T *y, T *mask) {
  KERNEL_LOOP(i, n) {
    if (first) {
      bool a_wins = a[i] > b[i];
      y[i] = a_wins ? a[i] : b[i];
      mask[i] = a_wins ? T(0) : T(1);
    } else if (b[i] > y[i]) {
      y[i] = b[i];
      mask[i] = T(idx);
    }
  }
}

// Routes the gradient to the winner: dx = dy where the mask names bottom
// idx, 0 elsewhere.
template <typename T>
__device__ void eltwise_max_backward(int n, const T *dy, const T *mask, int idx, T *dx) {
  KERNEL_LOOP(i, n) { dx[i] = mask[i] == T(idx) ? dy[i] : T(0); }
}

#define ELTWISE(T, S)                                                                           \
  extern "C" __global__ void eltwise_max_forward_##S(int n, const T *a, const T *b, int idx,   \
                                                     int first, T *y, T *mask) {               \
    eltwise_max_forward<T>(n, a, b, idx, first, y, mask);                                      \
  }                                                                                             \
  extern "C" __global__ void eltwise_max_backward_##S(int n, const T *dy, const T *mask,       \
                                                      int idx, T *dx) {                         \
    eltwise_max_backward<T>(n, dy, mask, idx, dx);                                              \
  }
BOTH_TYPES(ELTWISE)

// Eltwise SUM of two bottoms in one pass over 16-byte vectors (arrays
// aligned to 16 bytes): y = c1*b + c0*a, the arithmetic of the scale and
// axpy it replaces (cuBLAS's axpy fuses the multiply-add), which took
// three passes over y.
template <typename T, typename V, int W>
__device__ void eltwise_sum2(int n, T c0, const T *a, T c1, const T *b, T *y) {
  int nv = n / W;
  KERNEL_LOOP(i, nv) {
    V va = ((const V *)a)[i], vb = ((const V *)b)[i];
    T *ea = (T *)&va, *eb = (T *)&vb;
#pragma unroll
    for (int k = 0; k < W; k++) ea[k] = fma(c1, eb[k], c0 * ea[k]);
    ((V *)y)[i] = va;
  }
  KERNEL_LOOP(j, n - nv * W) {
    long long k = nv * W + j;
    y[k] = fma(c1, b[k], c0 * a[k]);
  }
}

#define ELTWISE_SUM2(T, V, W, S)                                                               \
  extern "C" __global__ void eltwise_sum2_##S(int n, T c0, const T *a, T c1, const T *b, T *y) { \
    eltwise_sum2<T, V, W>(n, c0, a, c1, b, y);                                                 \
  }
ELTWISE_SUM2(float, float4, 4, f32)
ELTWISE_SUM2(double, double2, 2, f64)

// Eltwise SUM of two bottoms and the ReLU in place on its top, computed
// together (Fuse): forward y = ReLU(c1*b + c0*a), ReLU(v) = v > 0 ? v :
// v*slope; backward g = dy * ((y > 0) + (y <= 0) * slope), Caffe's ReLU
// gradient from its bottom, which in place is y. g goes back to dy, as
// Caffe's ReLU leaves the top's diff, and c_i*g to each bottom's diff
// asked for (dx0, dx1 null: not wanted; Caffe copies where c_i is 1,
// which the product by one equals). Over W-element vectors V (W = 1: one
// element at a time, for arrays not aligned to 16 bytes).
template <typename T, typename V, int W>
__device__ void eltwise_sum2_relu(int n, T c0, const T *a, T c1, const T *b, T slope, T *y) {
  int nv = n / W;
  KERNEL_LOOP(i, nv) {
    V va = ((const V *)a)[i], vb = ((const V *)b)[i];
    T *ea = (T *)&va, *eb = (T *)&vb;
#pragma unroll
    for (int k = 0; k < W; k++) {
      T v = fma(c1, eb[k], c0 * ea[k]);
      ea[k] = v > 0 ? v : v * slope;
    }
    ((V *)y)[i] = va;
  }
  KERNEL_LOOP(j, n - nv * W) {
    long long k = nv * W + j;
    T v = fma(c1, b[k], c0 * a[k]);
    y[k] = v > 0 ? v : v * slope;
  }
}

template <typename T, typename V, int W>
__device__ void eltwise_sum2_relu_backward(int n, const T *y, T slope, T c0, T c1, T *dy, T *dx0, T *dx1) {
  int nv = n / W;
  KERNEL_LOOP(i, nv) {
    V vg = ((const V *)dy)[i], vy = ((const V *)y)[i], v0, v1;
    T *eg = (T *)&vg, *ey = (T *)&vy, *e0 = (T *)&v0, *e1 = (T *)&v1;
#pragma unroll
    for (int k = 0; k < W; k++) {
      eg[k] *= T(ey[k] > 0) + T(ey[k] <= 0) * slope;
      e0[k] = c0 * eg[k];
      e1[k] = c1 * eg[k];
    }
    ((V *)dy)[i] = vg;
    if (dx0) ((V *)dx0)[i] = v0;
    if (dx1) ((V *)dx1)[i] = v1;
  }
  KERNEL_LOOP(j, n - nv * W) {
    long long k = nv * W + j;
    T g = dy[k] * (T(y[k] > 0) + T(y[k] <= 0) * slope);
    dy[k] = g;
    if (dx0) dx0[k] = c0 * g;
    if (dx1) dx1[k] = c1 * g;
  }
}

#define ELTWISE_SUM2_RELU(T, V, W, S)                                                               \
  extern "C" __global__ void eltwise_sum2_relu##S(int n, T c0, const T *a, T c1, const T *b,       \
                                                  T slope, T *y) {                                  \
    eltwise_sum2_relu<T, V, W>(n, c0, a, c1, b, slope, y);                                          \
  }                                                                                                 \
  extern "C" __global__ void eltwise_sum2_relu_backward##S(int n, const T *y, T slope, T c0, T c1, \
                                                           T *dy, T *dx0, T *dx1) {                 \
    eltwise_sum2_relu_backward<T, V, W>(n, y, slope, c0, c1, dy, dx0, dx1);                         \
  }
ELTWISE_SUM2_RELU(float, float4, 4, _vec_f32)
ELTWISE_SUM2_RELU(double, double2, 2, _vec_f64)
ELTWISE_SUM2_RELU(float, float, 1, _f32)
ELTWISE_SUM2_RELU(double, double, 1, _f64)

// The fused SUM of two bottoms and ReLU on 16-bit values (the engine in a
// 16-bit type), computed in float as the FP32 kernels compute, each result
// rounded once.
template <typename P>
__device__ void eltwise_sum2_relu_half(int n, float c0, const typename P::E *a, float c1,
                                       const typename P::E *b, float slope, typename P::E *y) {
  KERNEL_LOOP(i, n) {
    float v = fmaf(c1, P::ld(b[i]), c0 * P::ld(a[i]));
    y[i] = P::st(v > 0 ? v : v * slope);
  }
}

template <typename P>
__device__ void eltwise_sum2_relu_backward_half(int n, const typename P::E *y, float slope, float c0,
                                                float c1, typename P::E *dy, typename P::E *dx0,
                                                typename P::E *dx1) {
  KERNEL_LOOP(i, n) {
    float v = P::ld(y[i]);
    float g = P::ld(dy[i]) * (float(v > 0) + float(v <= 0) * slope);
    dy[i] = P::st(g);
    if (dx0) dx0[i] = P::st(c0 * g);
    if (dx1) dx1[i] = P::st(c1 * g);
  }
}

// The same over 16-byte vectors of eight values (the arrays aligned to 16
// bytes), the tail one at a time: two-byte loads left these passes at
// about half the memory's speed.
template <typename P>
__device__ void eltwise_sum2_relu_half_vec(int n, float c0, const typename P::E *a, float c1,
                                           const typename P::E *b, float slope, typename P::E *y) {
  int nv = n / 8;
  KERNEL_LOOP(i, nv) {
    uint4 va = ((const uint4 *)a)[i], vb = ((const uint4 *)b)[i], vy;
    const half16 *ea = (const half16 *)&va, *eb = (const half16 *)&vb;
    half16 *ey = (half16 *)&vy;
#pragma unroll
    for (int k = 0; k < 8; k++) {
      float v = fmaf(c1, P::ld(eb[k]), c0 * P::ld(ea[k]));
      ey[k] = P::st(v > 0 ? v : v * slope);
    }
    ((uint4 *)y)[i] = vy;
  }
  KERNEL_LOOP(j, n - nv * 8) {
    long long k = nv * 8 + j;
    float v = fmaf(c1, P::ld(b[k]), c0 * P::ld(a[k]));
    y[k] = P::st(v > 0 ? v : v * slope);
  }
}

template <typename P>
__device__ void eltwise_sum2_relu_backward_half_vec(int n, const typename P::E *y, float slope, float c0,
                                                    float c1, typename P::E *dy, typename P::E *dx0,
                                                    typename P::E *dx1) {
  int nv = n / 8;
  KERNEL_LOOP(i, nv) {
    uint4 vy = ((const uint4 *)y)[i], vg = ((const uint4 *)dy)[i], v0, v1;
    const half16 *ey = (const half16 *)&vy;
    half16 *eg = (half16 *)&vg, *e0 = (half16 *)&v0, *e1 = (half16 *)&v1;
#pragma unroll
    for (int k = 0; k < 8; k++) {
      float v = P::ld(ey[k]);
      float g = P::ld(eg[k]) * (float(v > 0) + float(v <= 0) * slope);
      eg[k] = P::st(g);
      e0[k] = P::st(c0 * g);
      e1[k] = P::st(c1 * g);
    }
    ((uint4 *)dy)[i] = vg;
    if (dx0) ((uint4 *)dx0)[i] = v0;
    if (dx1) ((uint4 *)dx1)[i] = v1;
  }
  KERNEL_LOOP(j, n - nv * 8) {
    long long k = nv * 8 + j;
    float v = P::ld(y[k]);
    float g = P::ld(dy[k]) * (float(v > 0) + float(v <= 0) * slope);
    dy[k] = P::st(g);
    if (dx0) dx0[k] = P::st(c0 * g);
    if (dx1) dx1[k] = P::st(c1 * g);
  }
}

#define ELTWISE_SUM2_RELU_HALF(P, S)                                                                   \
  extern "C" __global__ void eltwise_sum2_relu_##S(int n, float c0, const P::E *a, float c1,          \
                                                   const P::E *b, float slope, P::E *y) {             \
    eltwise_sum2_relu_half<P>(n, c0, a, c1, b, slope, y);                                              \
  }                                                                                                    \
  extern "C" __global__ void eltwise_sum2_relu_backward_##S(int n, const P::E *y, float slope,        \
                                                            float c0, float c1, P::E *dy, P::E *dx0, \
                                                            P::E *dx1) {                               \
    eltwise_sum2_relu_backward_half<P>(n, y, slope, c0, c1, dy, dx0, dx1);                             \
  }                                                                                                    \
  extern "C" __global__ void eltwise_sum2_relu_vec_##S(int n, float c0, const P::E *a, float c1,      \
                                                       const P::E *b, float slope, P::E *y) {         \
    eltwise_sum2_relu_half_vec<P>(n, c0, a, c1, b, slope, y);                                          \
  }                                                                                                    \
  extern "C" __global__ void eltwise_sum2_relu_backward_vec_##S(int n, const P::E *y, float slope,    \
                                                                float c0, float c1, P::E *dy,         \
                                                                P::E *dx0, P::E *dx1) {               \
    eltwise_sum2_relu_backward_half_vec<P>(n, y, slope, c0, c1, dy, dx0, dx1);                         \
  }
HALF_STORAGES(ELTWISE_SUM2_RELU_HALF)
