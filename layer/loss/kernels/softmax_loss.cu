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

// The loss from the per-position losses, on the device (one block of 256):
// top[0] = sum(loss) / normalizer and norm[0] = normalizer, which is the
// number of counted positions when use_counts is set, fixed_norm
// otherwise, and at least 1 (Caffe's get_normalizer).
template <typename T>
__device__ void softmax_loss_total(int n, const T *loss, const T *counts, int use_counts,
                                   double fixed_norm, T *top, T *norm) {
  __shared__ double sum[256], cnt[256];
  double s = 0, c = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    s += loss[i];
    if (use_counts) c += counts[i];
  }
  sum[threadIdx.x] = s;
  cnt[threadIdx.x] = c;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      sum[threadIdx.x] += sum[threadIdx.x + h];
      cnt[threadIdx.x] += cnt[threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double d = use_counts ? cnt[0] : fixed_norm;
    d = d > 1 ? d : 1;
    top[0] = (T)(sum[0] / d);
    norm[0] = (T)d;
  }
}

// x[i] *= num[0] / den[0]: the backward pass's scale, the top's gradient
// over the forward's normalizer, read on the device.
template <typename T>
__device__ void scale_by_ratio(int n, T *x, const T *num, const T *den) {
  T f = (T)((double)num[0] / (double)den[0]);
  KERNEL_LOOP(i, n) { x[i] *= f; }
}

#define SOFTMAX_LOSS_TOTAL(T, S)                                                                  \
  extern "C" __global__ void softmax_loss_total_##S(int n, const T *loss, const T *counts,       \
      int use_counts, double fixed_norm, T *top, T *norm) {                                       \
    softmax_loss_total<T>(n, loss, counts, use_counts, fixed_norm, top, norm);                    \
  }                                                                                               \
  extern "C" __global__ void scale_by_ratio_##S(int n, T *x, const T *num, const T *den) {        \
    scale_by_ratio<T>(n, x, num, den);                                                            \
  }
BOTH_TYPES(SOFTMAX_LOSS_TOTAL)
