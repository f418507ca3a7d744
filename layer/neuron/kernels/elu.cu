// ELU: y = x > 0 ? x : alpha * (exp(x) - 1); dy/dx = x > 0 ? 1 : y + alpha.

#define ELU(T, S)                                                                            \
  extern "C" __global__ void elu_forward_##S(int n, const T *x, T *y, T alpha) {             \
    KERNEL_LOOP(i, n) { T v = x[i]; y[i] = v > 0 ? v : alpha * expm1(v); }                   \
  }                                                                                          \
  extern "C" __global__ void elu_backward_##S(int n, const T *dy, const T *y, const T *x,    \
                                              T *dx, T alpha) {                              \
    KERNEL_LOOP(i, n) { dx[i] = x[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha); }                 \
  }
BOTH_TYPES(ELU)
