// Exp: y = outer * exp(inner * x) (= base^(shift + scale * x) with
// inner = ln(base) * scale, outer = base^shift); dy/dx = inner * y.

#define EXP(T, S)                                                                            \
  extern "C" __global__ void exp_forward_##S(int n, const T *x, T *y, T inner, T outer) {    \
    KERNEL_LOOP(i, n) { y[i] = outer * exp(inner * x[i]); }                                  \
  }                                                                                          \
  extern "C" __global__ void exp_backward_##S(int n, const T *dy, const T *y, T *dx,         \
                                              T inner) {                                     \
    KERNEL_LOOP(i, n) { dx[i] = dy[i] * y[i] * inner; }                                      \
  }
BOTH_TYPES(EXP)
