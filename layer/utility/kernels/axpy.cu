// Kernels of SENet's Axpy layer.

#define AXPY(T, S)                                                                                  \
  /* Axpy: out = a[plane] * x + y. */                                                               \
  extern "C" __global__ void axpy_forward_##S(int n, int spatial, const T *a, const T *x,           \
                                              const T *y, T *out) {                                 \
    KERNEL_LOOP(i, n) { out[i] = a[i / spatial] * x[i] + y[i]; }                                    \
  }                                                                                                 \
  /* Axpy backward: dx = a * dtop; one thread per plane sums da. */                                 \
  extern "C" __global__ void axpy_dx_##S(int n, int spatial, const T *a, const T *dtop, T *dx) {    \
    KERNEL_LOOP(i, n) { dx[i] = a[i / spatial] * dtop[i]; }                                         \
  }                                                                                                 \
  extern "C" __global__ void axpy_da_##S(int planes, int spatial, const T *dtop, const T *x,        \
                                         T *da) {                                                   \
    KERNEL_LOOP(p, planes) {                                                                        \
      T sum = 0;                                                                                    \
      for (int k = 0; k < spatial; ++k) sum += dtop[p * spatial + k] * x[p * spatial + k];          \
      da[p] = sum;                                                                                  \
    }                                                                                               \
  }
BOTH_TYPES(AXPY)
