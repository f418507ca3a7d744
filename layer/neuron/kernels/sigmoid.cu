// Sigmoid: y = 0.5 * tanh(0.5 * x) + 0.5 (= 1 / (1 + exp(-x)), without
// overflow); dy/dx = y * (1 - y).

#define SIGMOID(T, S)                                                                        \
  extern "C" __global__ void sigmoid_forward_##S(int n, const T *x, T *y) {                  \
    KERNEL_LOOP(i, n) { y[i] = (T)0.5 * tanh((T)0.5 * x[i]) + (T)0.5; }                      \
  }                                                                                          \
  extern "C" __global__ void sigmoid_backward_##S(int n, const T *dy, const T *y, T *dx) {   \
    KERNEL_LOOP(i, n) { T v = y[i]; dx[i] = dy[i] * v * (1 - v); }                           \
  }
BOTH_TYPES(SIGMOID)
