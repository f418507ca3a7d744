// Kernels of TSN's BN layer.

// block_sum adds v over the block's threads through part (blockDim.x
// entries of shared memory) and returns the total to every thread.
__device__ inline double block_sum(double v, double *part) {
  part[threadIdx.x] = v;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  double total = part[0];
  __syncthreads();
  return total;
}

#define BN(T, S)                                                                                                                  \
  /* BN (TSN): one block per channel sums over images and positions, in */                                                        \
  /* double, with a tree in shared memory.                               */                                                       \
  extern "C" __global__ void bn_stats_##S(int num, int channels, int spatial, const T *x, T *mean, T *var) {                      \
    __shared__ double part[512];                                                                                                  \
    int c = blockIdx.x, m = num * spatial;                                                                                        \
    double s = 0;                                                                                                                 \
    for (int k = threadIdx.x; k < m; k += blockDim.x) s += x[((long long)(k / spatial) * channels + c) * spatial + k % spatial];  \
    T mu = (T)(block_sum(s, part) / m);                                                                                           \
    s = 0;                                                                                                                        \
    for (int k = threadIdx.x; k < m; k += blockDim.x) {                                                                           \
      double d = (double)x[((long long)(k / spatial) * channels + c) * spatial + k % spatial] - mu;                               \
      s += d * d;                                                                                                                 \
    }                                                                                                                             \
    double sq = block_sum(s, part);                                                                                               \
    if (threadIdx.x == 0) {                                                                                                       \
      mean[c] = mu;                                                                                                               \
      var[c] = (T)(sq / m);                                                                                                       \
    }                                                                                                                             \
  }                                                                                                                               \
  /* The running averages (when training statistics are used) and 1/std. */                                                       \
  extern "C" __global__ void bn_running_##S(int channels, int update, T momentum, T eps, const T *mean,                           \
                                            const T *var, T *run_mean, T *run_var, T *inv_std) {                                  \
    KERNEL_LOOP(c, channels) {                                                                                                    \
      if (update) {                                                                                                               \
        run_mean[c] = (1 - momentum) * mean[c] + momentum * run_mean[c];                                                          \
        run_var[c] = (1 - momentum) * var[c] + momentum * run_var[c];                                                             \
      }                                                                                                                           \
      inv_std[c] = (T)(1.0 / sqrt((double)(var[c] + eps)));                                                                       \
    }                                                                                                                             \
  }                                                                                                                               \
  extern "C" __global__ void bn_forward_##S(int n, int channels, int spatial, const T *x, const T *mean,                          \
                                            const T *inv_std, const T *slope, const T *bias, T *xnorm, T *y) {                    \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int c = i / spatial % channels;                                                                                             \
      T xn = (x[i] - mean[c]) * inv_std[c];                                                                                       \
      xnorm[i] = xn;                                                                                                              \
      y[i] = slope[c] * xn + bias[c];                                                                                             \
    }                                                                                                                             \
  }                                                                                                                               \
  /* Per channel: sum dy and sum dy * x_norm (block per channel, as bn_stats). */                                                 \
  extern "C" __global__ void bn_grad_sums_##S(int num, int channels, int spatial, const T *dy, const T *xnorm,                    \
                                              T *sum_dy, T *sum_dyx) {                                                            \
    __shared__ double part[512];                                                                                                  \
    int c = blockIdx.x, m = num * spatial;                                                                                        \
    double s = 0, t = 0;                                                                                                          \
    for (int k = threadIdx.x; k < m; k += blockDim.x) {                                                                           \
      long long i = ((long long)(k / spatial) * channels + c) * spatial + k % spatial;                                            \
      s += dy[i];                                                                                                                 \
      t += (double)dy[i] * xnorm[i];                                                                                              \
    }                                                                                                                             \
    double a = block_sum(s, part), b = block_sum(t, part);                                                                        \
    if (threadIdx.x == 0) {                                                                                                       \
      sum_dy[c] = (T)a;                                                                                                           \
      sum_dyx[c] = (T)b;                                                                                                          \
    }                                                                                                                             \
  }                                                                                                                               \
  /* dx = slope/std * (dy - mean(dy) - x_norm mean(dy x_norm)), or with the */                                                    \
  /* running statistics slope/std * dy.                                     */                                                    \
  extern "C" __global__ void bn_backward_##S(int n, int channels, int spatial, T m, int running, const T *dy,                     \
                                             const T *xnorm, const T *slope, const T *inv_std,                                    \
                                             const T *sum_dy, const T *sum_dyx, T *dx) {                                          \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int c = i / spatial % channels;                                                                                             \
      T k = slope[c] * inv_std[c];                                                                                                \
      dx[i] = running ? k * dy[i] : k * (dy[i] - sum_dy[c] / m - xnorm[i] * sum_dyx[c] / m);                                      \
    }                                                                                                                             \
  }
BOTH_TYPES(BN)
