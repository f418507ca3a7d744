// SigmoidCrossEntropyLoss: one thread per element. A target t counts unless
// (int)t is the ignored label.

// -(t*x - log(1 + exp(x))) without overflow.
template <typename T>
__device__ T sigmoid_cross_entropy(T x, T t) {
  return x >= 0 ? x * (1 - t) + log1p(exp(-x)) : -x * t + log1p(exp(x));
}

template <typename T>
__device__ void sigmoid_cross_entropy_loss_forward(int n, const T *x, const T *target, T *loss,
                                                   T *counts, int has_ignore, int ignore) {
  KERNEL_LOOP(i, n) {
    if (has_ignore && (int)target[i] == ignore) {
      loss[i] = 0;
      counts[i] = 0;
    } else {
      loss[i] = sigmoid_cross_entropy(x[i], target[i]);
      counts[i] = 1;
    }
  }
}

template <typename T>
__device__ void sigmoid_cross_entropy_loss_backward(int n, const T *x, const T *target, T *dx,
                                                    T scale, int has_ignore, int ignore) {
  KERNEL_LOOP(i, n) {
    if (has_ignore && (int)target[i] == ignore) {
      dx[i] = 0;
    } else {
      dx[i] = (1 / (1 + exp(-x[i])) - target[i]) * scale;
    }
  }
}

#define SIGMOID_CROSS_ENTROPY_LOSS(T, S)                                                        \
  extern "C" __global__ void sigmoid_cross_entropy_loss_forward_##S(                            \
      int n, const T *x, const T *target, T *loss, T *counts, int has_ignore, int ignore) {     \
    sigmoid_cross_entropy_loss_forward<T>(n, x, target, loss, counts, has_ignore, ignore);      \
  }                                                                                             \
  extern "C" __global__ void sigmoid_cross_entropy_loss_backward_##S(                           \
      int n, const T *x, const T *target, T *dx, T scale, int has_ignore, int ignore) {         \
    sigmoid_cross_entropy_loss_backward<T>(n, x, target, dx, scale, has_ignore, ignore);        \
  }
BOTH_TYPES(SIGMOID_CROSS_ENTROPY_LOSS)
