// AbsVal: y = |x|; dy/dx = sign(x), 0 at 0.

#define ABSVAL(T, S)                                                                         \
  extern "C" __global__ void absval_forward_##S(int n, const T *x, T *y) {                   \
    KERNEL_LOOP(i, n) { y[i] = fabs(x[i]); }                                                 \
  }                                                                                          \
  extern "C" __global__ void absval_backward_##S(int n, const T *dy, const T *x, T *dx) {    \
    KERNEL_LOOP(i, n) {                                                                      \
      T v = x[i];                                                                            \
      dx[i] = v > 0 ? dy[i] : (v < 0 ? -dy[i] : (T)0);                                       \
    }                                                                                        \
  }
BOTH_TYPES(ABSVAL)
