// Threshold: y = x > threshold ? 1 : 0. No backward.

#define THRESHOLD(T, S)                                                                      \
  extern "C" __global__ void threshold_forward_##S(int n, const T *x, T *y, T threshold) {   \
    KERNEL_LOOP(i, n) { y[i] = x[i] > threshold ? (T)1 : (T)0; }                             \
  }
BOTH_TYPES(THRESHOLD)
