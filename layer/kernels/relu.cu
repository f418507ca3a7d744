// ReLU: y = max(x, 0) + slope * min(x, 0).

#define RELU(T, S)                                                                     \
  extern "C" __global__ void relu_forward_##S(int n, const T *x, T *y, T slope) {      \
    KERNEL_LOOP(i, n) { T v = x[i]; y[i] = v > 0 ? v : v * slope; }                    \
  }                                                                                    \
  extern "C" __global__ void relu_backward_##S(int n, const T *dy, const T *x, T *dx,  \
                                               T slope) {                              \
    KERNEL_LOOP(i, n) { dx[i] = x[i] > 0 ? dy[i] : dy[i] * slope; }                    \
  }
BOTH_TYPES(RELU)
