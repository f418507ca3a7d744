// Kernels of Faster R-CNN's SmoothL1Loss layer.

#define SMOOTH_L1_LOSS(T, S)                                                                          \
  /* SmoothL1Loss (Faster R-CNN): diff = w_in * (a - b); errs = f(diff), */                           \
  /* f(d) = 0.5 (sigma d)^2 inside |d| < 1/sigma^2, |d| - 0.5/sigma^2 beyond. */                      \
  extern "C" __global__ void smooth_l1_forward_##S(int n, const T *a, const T *b, const T *in,        \
                                                   int has_in, T sigma2, T *diff, T *errs) {          \
    KERNEL_LOOP(i, n) {                                                                               \
      T d = a[i] - b[i];                                                                              \
      if (has_in) d *= in[i];                                                                         \
      diff[i] = d;                                                                                    \
      T e = d < 0 ? -d : d;                                                                           \
      errs[i] = e < 1 / sigma2 ? (T)0.5 * d * d * sigma2 : e - (T)0.5 / sigma2;                       \
    }                                                                                                 \
  }                                                                                                   \
  extern "C" __global__ void smooth_l1_backward_##S(int n, const T *diff, const T *in, const T *out,  \
                                                    int has_w, T sigma2, T alpha, T *dx) {            \
    KERNEL_LOOP(i, n) {                                                                               \
      T d = diff[i], g;                                                                               \
      if (d < 1 / sigma2 && d > -1 / sigma2) g = sigma2 * d;                                          \
      else g = d > 0 ? (T)1 : (d < 0 ? (T)-1 : (T)0);                                                 \
      g *= alpha;                                                                                     \
      if (has_w) g *= in[i] * out[i];                                                                 \
      dx[i] = g;                                                                                      \
    }                                                                                                 \
  }
BOTH_TYPES(SMOOTH_L1_LOSS)
