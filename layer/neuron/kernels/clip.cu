// Clip: y = max(lo, min(hi, x)); the gradient passes where lo <= x <= hi.

#define CLIP(T, S)                                                                           \
  extern "C" __global__ void clip_forward_##S(int n, const T *x, T *y, T lo, T hi) {         \
    KERNEL_LOOP(i, n) { y[i] = max(lo, min(hi, x[i])); }                                     \
  }                                                                                          \
  extern "C" __global__ void clip_backward_##S(int n, const T *dy, const T *x, T *dx, T lo,  \
                                               T hi) {                                       \
    KERNEL_LOOP(i, n) { dx[i] = (x[i] >= lo && x[i] <= hi) ? dy[i] : (T)0; }                 \
  }
BOTH_TYPES(CLIP)
