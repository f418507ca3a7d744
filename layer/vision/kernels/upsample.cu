// Kernels of SegNet's Upsample layer.

#define UPSAMPLE(T, S)                                                                                           \
  /* Upsample (SegNet): value i of a plane of in goes to position mask[i] */                                     \
  /* of its plane of out; positions outside the plane are skipped.        */                                     \
  extern "C" __global__ void upsample_forward_##S(int n, int in, int out, const T *x, const T *mask, T *y) {     \
    KERNEL_LOOP(i, n) {                                                                                          \
      int p = (int)mask[i];                                                                                      \
      if (p >= 0 && p < out) y[(long long)(i / in) * out + p] = x[i];                                            \
    }                                                                                                            \
  }                                                                                                              \
  extern "C" __global__ void upsample_backward_##S(int n, int in, int out, const T *dy, const T *mask, T *dx) {  \
    KERNEL_LOOP(i, n) {                                                                                          \
      int p = (int)mask[i];                                                                                      \
      dx[i] = (p >= 0 && p < out) ? dy[(long long)(i / in) * out + p] : (T)0;                                    \
    }                                                                                                            \
  }
BOTH_TYPES(UPSAMPLE)
