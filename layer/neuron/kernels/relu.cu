// ReLU: y = max(x, 0) + slope * min(x, 0) (Caffe's GPU kernel: x > 0 ? x
// : x * slope); the gradient is Caffe's dy * ((x > 0) + (x <= 0) * slope),
// which is dy * 0 where x is NaN.

#define RELU(T, S)                                                                     \
  extern "C" __global__ void relu_forward_##S(int n, const T *x, T *y, T slope) {      \
    KERNEL_LOOP(i, n) { T v = x[i]; y[i] = v > 0 ? v : v * slope; }                    \
  }                                                                                    \
  extern "C" __global__ void relu_backward_##S(int n, const T *dy, const T *x, T *dx,  \
                                               T slope) {                              \
    KERNEL_LOOP(i, n) { dx[i] = dy[i] * (T(x[i] > 0) + T(x[i] <= 0) * slope); }        \
  }
BOTH_TYPES(RELU)

// The same on 16-byte vectors (4 floats, 2 doubles) for arrays aligned to
// 16 bytes: nv vectors, then the n - nv*W elements left one by one. Twice
// the bandwidth of the kernels above on the H100, where ReLU is a pass
// over memory.
template <typename T, typename V, int W>
__device__ void relu_forward_vec(int n, const T *x, T *y, T slope) {
  int nv = n / W;
  KERNEL_LOOP(i, nv) {
    V v = ((const V *)x)[i];
    T *e = (T *)&v;
#pragma unroll
    for (int k = 0; k < W; k++) e[k] = e[k] > 0 ? e[k] : e[k] * slope;
    ((V *)y)[i] = v;
  }
  KERNEL_LOOP(j, n - nv * W) {
    T v = x[nv * W + j];
    y[nv * W + j] = v > 0 ? v : v * slope;
  }
}

template <typename T, typename V, int W>
__device__ void relu_backward_vec(int n, const T *dy, const T *x, T *dx, T slope) {
  int nv = n / W;
  KERNEL_LOOP(i, nv) {
    V g = ((const V *)dy)[i], v = ((const V *)x)[i];
    T *ge = (T *)&g, *ve = (T *)&v;
#pragma unroll
    for (int k = 0; k < W; k++) ge[k] = ge[k] * (T(ve[k] > 0) + T(ve[k] <= 0) * slope);
    ((V *)dx)[i] = g;
  }
  KERNEL_LOOP(j, n - nv * W) {
    long long k = nv * W + j;
    dx[k] = dy[k] * (T(x[k] > 0) + T(x[k] <= 0) * slope);
  }
}

#define RELU_VEC(T, V, W, S)                                                                 \
  extern "C" __global__ void relu_forward_vec_##S(int n, const T *x, T *y, T slope) {        \
    relu_forward_vec<T, V, W>(n, x, y, slope);                                               \
  }                                                                                          \
  extern "C" __global__ void relu_backward_vec_##S(int n, const T *dy, const T *x, T *dx,    \
                                                   T slope) {                                \
    relu_backward_vec<T, V, W>(n, dy, x, dx, slope);                                         \
  }
RELU_VEC(float, float4, 4, f32)
RELU_VEC(double, double2, 2, f64)

// ReLU on 16-bit storage (FLOAT16, BFLOAT16), computed in float: a layer
// the plan runs in reduced precision (kit.Reduced).
#define RELU_HALF(S)                                                                        \
  extern "C" __global__ void relu_forward_##S##_f32(int n, const half16 *x, half16 *y,       \
                                                    float slope) {                          \
    KERNEL_LOOP(i, n) {                                                                     \
      float v = from_##S(x[i]);                                                             \
      y[i] = v > 0 ? x[i] : to_##S(v * slope);                                              \
    }                                                                                       \
  }                                                                                         \
  extern "C" __global__ void relu_backward_##S##_f32(int n, const half16 *dy, const half16 *x, \
                                                     half16 *dx, float slope) {             \
    KERNEL_LOOP(i, n) {                                                                     \
      float v = from_##S(x[i]);                                                             \
      dx[i] = to_##S(from_##S(dy[i]) * (float(v > 0) + float(v <= 0) * slope));              \
    }                                                                                       \
  }
RELU_HALF(f16)
RELU_HALF(bf16)

// The same 8 values a thread (_vec), for arrays aligned to 16 bytes
// (kit.HalfVectorKernel): one 16-byte load or store per array, then the
// n - nv*8 values left one by one. One 2-byte value a thread ran CaffeNet's
// relu1 at about 1.5 TB/s on the H100 (0.20 ms forward, 0.23 backward for
// 74 million values); the values are the one-by-one kernels' bit for bit.
template <class P>
__device__ void relu_forward_vec_half(int n, const half16 *x, half16 *y, float slope) {
  int nv = n / 8;
  KERNEL_LOOP(i, nv) {
    float v[8];
    unpack8<P>(((const uint4 *)x)[i], v);
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = v[k] > 0 ? v[k] : v[k] * slope;
    ((uint4 *)y)[i] = pack8<P>(v);
  }
  KERNEL_LOOP(j, n - nv * 8) {
    long long k = nv * 8 + j;
    float v = P::ld(x[k]);
    y[k] = v > 0 ? x[k] : P::st(v * slope);
  }
}

template <class P>
__device__ void relu_backward_vec_half(int n, const half16 *dy, const half16 *x, half16 *dx, float slope) {
  int nv = n / 8;
  KERNEL_LOOP(i, nv) {
    float v[8], d[8];
    unpack8<P>(((const uint4 *)x)[i], v);
    unpack8<P>(((const uint4 *)dy)[i], d);
#pragma unroll
    for (int k = 0; k < 8; k++) d[k] = d[k] * (float(v[k] > 0) + float(v[k] <= 0) * slope);
    ((uint4 *)dx)[i] = pack8<P>(d);
  }
  KERNEL_LOOP(j, n - nv * 8) {
    long long k = nv * 8 + j;
    float v = P::ld(x[k]);
    dx[k] = P::st(P::ld(dy[k]) * (float(v > 0) + float(v <= 0) * slope));
  }
}

#define RELU_HALF_VEC(P, S)                                                                      \
  extern "C" __global__ void relu_forward_vec_##S(int n, const half16 *x, half16 *y, float slope) { \
    relu_forward_vec_half<P>(n, x, y, slope);                                                    \
  }                                                                                              \
  extern "C" __global__ void relu_backward_vec_##S(int n, const half16 *dy, const half16 *x,       \
                                                   half16 *dx, float slope) {                    \
    relu_backward_vec_half<P>(n, dy, x, dx, slope);                                              \
  }
HALF_STORAGES(RELU_HALF_VEC)
