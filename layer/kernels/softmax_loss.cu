// SoftmaxWithLoss: thread i handles position (i / inner, i % inner).
// counts[i] is 1 for a position that counts, 0 for an ignored one.

#define FLT_MIN_VALUE 1.17549435082228750797e-38

template <typename T>
__device__ void softmax_loss_forward(int n, int channels, int inner, const T *prob, const T *label,
                                     T *loss, T *counts, int has_ignore, int ignore) {
  KERNEL_LOOP(i, n) {
    T v = label[i];
    int c = (int)v;
    if (has_ignore && c == ignore) {
      loss[i] = 0;
      counts[i] = 0;
    } else if (c < 0 || c >= channels || (T)c != v) {
      loss[i] = nan("");  // reported by the host with the position
      counts[i] = 1;
    } else {
      long long j = (i / inner) * (long long)channels * inner + (long long)c * inner + i % inner;
      loss[i] = -log(max(prob[j], (T)FLT_MIN_VALUE));
      counts[i] = 1;
    }
  }
}

template <typename T>
__device__ void softmax_loss_backward(int n, int channels, int inner, const T *label, T *dx,
                                      T *counts, int has_ignore, int ignore) {
  KERNEL_LOOP(i, n) {
    int c = (int)label[i];
    long long base = (i / inner) * (long long)channels * inner + i % inner;
    if (has_ignore && c == ignore) {
      for (int k = 0; k < channels; k++) dx[base + (long long)k * inner] = 0;
      counts[i] = 0;
    } else {
      dx[base + (long long)c * inner] -= 1;
      counts[i] = 1;
    }
  }
}

#define SOFTMAX_LOSS(T, S)                                                                        \
  extern "C" __global__ void softmax_loss_forward_##S(int n, int channels, int inner,             \
      const T *prob, const T *label, T *loss, T *counts, int has_ignore, int ignore) {             \
    softmax_loss_forward<T>(n, channels, inner, prob, label, loss, counts, has_ignore, ignore);    \
  }                                                                                               \
  extern "C" __global__ void softmax_loss_backward_##S(int n, int channels, int inner,            \
      const T *label, T *dx, T *counts, int has_ignore, int ignore) {                              \
    softmax_loss_backward<T>(n, channels, inner, label, dx, counts, has_ignore, ignore);           \
  }
BOTH_TYPES(SOFTMAX_LOSS)
