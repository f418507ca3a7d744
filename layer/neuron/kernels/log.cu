// Log: y = log(shift + scale * x) * base_scale (base_scale = 1 / ln(base));
// dy/dx = back_scale / (shift + scale * x) (back_scale = scale / ln(base)).

#define LOG(T, S)                                                                            \
  extern "C" __global__ void log_forward_##S(int n, const T *x, T *y, T scale, T shift,      \
                                             T base_scale) {                                 \
    KERNEL_LOOP(i, n) { y[i] = log(shift + scale * x[i]) * base_scale; }                     \
  }                                                                                          \
  extern "C" __global__ void log_backward_##S(int n, const T *dy, const T *x, T *dx,         \
                                              T scale, T shift, T back_scale) {              \
    KERNEL_LOOP(i, n) { dx[i] = dy[i] * (back_scale / (shift + scale * x[i])); }             \
  }
BOTH_TYPES(LOG)
