// Softmax along the channel axis: thread i handles outer position
// i / inner and inner position i % inner, walking its channels (stride
// inner).

template <typename T>
__device__ void softmax_forward(int n, int channels, int inner, const T *x, T *y) {
  KERNEL_LOOP(i, n) {
    long long base = (i / inner) * (long long)channels * inner + i % inner;
    T m = x[base];
    for (int c = 1; c < channels; c++) m = max(m, x[base + (long long)c * inner]);
    T sum = 0;
    for (int c = 0; c < channels; c++) {
      T e = exp(x[base + (long long)c * inner] - m);
      y[base + (long long)c * inner] = e;
      sum += e;
    }
    for (int c = 0; c < channels; c++) y[base + (long long)c * inner] /= sum;
  }
}

template <typename T>
__device__ void softmax_backward(int n, int channels, int inner, const T *y, const T *dy, T *dx) {
  KERNEL_LOOP(i, n) {
    long long base = (i / inner) * (long long)channels * inner + i % inner;
    T d = 0;
    for (int c = 0; c < channels; c++) d += dy[base + (long long)c * inner] * y[base + (long long)c * inner];
    for (int c = 0; c < channels; c++) {
      long long j = base + (long long)c * inner;
      dx[j] = (dy[j] - d) * y[j];
    }
  }
}

#define SOFTMAX(T, S)                                                                          \
  extern "C" __global__ void softmax_forward_##S(int n, int channels, int inner, const T *x,    \
                                                 T *y) {                                       \
    softmax_forward<T>(n, channels, inner, x, y);                                              \
  }                                                                                            \
  extern "C" __global__ void softmax_backward_##S(int n, int channels, int inner, const T *y,   \
                                                  const T *dy, T *dx) {                        \
    softmax_backward<T>(n, channels, inner, y, dy, dx);                                        \
  }
BOTH_TYPES(SOFTMAX)
