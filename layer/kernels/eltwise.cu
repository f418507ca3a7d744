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
