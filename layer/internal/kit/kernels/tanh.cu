// TanH: y = tanh(x); dy/dx = 1 - y^2.

#define TANH(T, S)                                                                           \
  extern "C" __global__ void tanh_forward_##S(int n, const T *x, T *y) {                     \
    KERNEL_LOOP(i, n) { y[i] = tanh(x[i]); }                                                 \
  }                                                                                          \
  extern "C" __global__ void tanh_backward_##S(int n, const T *dy, const T *y, T *dx) {      \
    KERNEL_LOOP(i, n) { T v = y[i]; dx[i] = dy[i] * (1 - v * v); }                           \
  }
BOTH_TYPES(TANH)
