// Swish: s = sigmoid(beta x), y = x s; dx = dy (beta y + s (1 - beta y)).

#define SWISH(T, S)                                                                          \
  extern "C" __global__ void swish_forward_##S(int n, const T *x, T *y, T *sig, T beta) {    \
    KERNEL_LOOP(i, n) {                                                                      \
      T v = x[i];                                                                            \
      T s = (T)0.5 * tanh((T)0.5 * beta * v) + (T)0.5;                                       \
      sig[i] = s;                                                                            \
      y[i] = v * s;                                                                          \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void swish_backward_##S(int n, const T *dy, const T *y,              \
                                                const T *sig, T *dx, T beta) {               \
    KERNEL_LOOP(i, n) {                                                                      \
      T s = sig[i];                                                                          \
      dx[i] = dy[i] * (beta * y[i] + s * (1 - beta * y[i]));                                 \
    }                                                                                        \
  }
BOTH_TYPES(SWISH)
