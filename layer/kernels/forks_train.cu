// Kernels of the forks' layers used in training: Faster R-CNN's
// SmoothL1Loss, SegNet's Upsample, PSPNet's Interp and TSN's BN.

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

#define FORKS_TRAIN(T, S)                                                                                                         \
  /* SmoothL1Loss (Faster R-CNN): diff = w_in * (a - b); errs = f(diff), */                                                       \
  /* f(d) = 0.5 (sigma d)^2 inside |d| < 1/sigma^2, |d| - 0.5/sigma^2 beyond. */                                                  \
  extern "C" __global__ void smooth_l1_forward_##S(int n, const T *a, const T *b, const T *in,                                    \
                                                   int has_in, T sigma2, T *diff, T *errs) {                                      \
    KERNEL_LOOP(i, n) {                                                                                                           \
      T d = a[i] - b[i];                                                                                                          \
      if (has_in) d *= in[i];                                                                                                     \
      diff[i] = d;                                                                                                                \
      T e = d < 0 ? -d : d;                                                                                                       \
      errs[i] = e < 1 / sigma2 ? (T)0.5 * d * d * sigma2 : e - (T)0.5 / sigma2;                                                   \
    }                                                                                                                             \
  }                                                                                                                               \
  extern "C" __global__ void smooth_l1_backward_##S(int n, const T *diff, const T *in, const T *out,                              \
                                                    int has_w, T sigma2, T alpha, T *dx) {                                        \
    KERNEL_LOOP(i, n) {                                                                                                           \
      T d = diff[i], g;                                                                                                           \
      if (d < 1 / sigma2 && d > -1 / sigma2) g = sigma2 * d;                                                                      \
      else g = d > 0 ? (T)1 : (d < 0 ? (T)-1 : (T)0);                                                                             \
      g *= alpha;                                                                                                                 \
      if (has_w) g *= in[i] * out[i];                                                                                             \
      dx[i] = g;                                                                                                                  \
    }                                                                                                                             \
  }                                                                                                                               \
  /* Upsample (SegNet): value i of a plane of in goes to position mask[i] */                                                      \
  /* of its plane of out; positions outside the plane are skipped.        */                                                      \
  extern "C" __global__ void upsample_forward_##S(int n, int in, int out, const T *x, const T *mask, T *y) {                      \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int p = (int)mask[i];                                                                                                       \
      if (p >= 0 && p < out) y[(long long)(i / in) * out + p] = x[i];                                                             \
    }                                                                                                                             \
  }                                                                                                                               \
  extern "C" __global__ void upsample_backward_##S(int n, int in, int out, const T *dy, const T *mask, T *dx) {                   \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int p = (int)mask[i];                                                                                                       \
      dx[i] = (p >= 0 && p < out) ? dy[(long long)(i / in) * out + p] : (T)0;                                                     \
    }                                                                                                                             \
  }                                                                                                                               \
  /* Interp (PSPNet, DeepLab): bilinear taps per output row and column,  */                                                       \
  /* each (first source index, step to the second, second's weight).      */                                                      \
  extern "C" __global__ void interp_forward_##S(int n, int in_h, int in_w, int out_h, int out_w,                                  \
                                                const T *rows, const T *cols, const T *x, T *y) {                                 \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int j = i % out_w, r = i / out_w % out_h, p = i / out_w / out_h;                                                            \
      int ra = (int)rows[3 * r], rs = (int)rows[3 * r + 1], ca = (int)cols[3 * j], cs = (int)cols[3 * j + 1];                     \
      T h1 = rows[3 * r + 2], h0 = 1 - h1, w1 = cols[3 * j + 2], w0 = 1 - w1;                                                     \
      const T *src = x + (long long)p * in_h * in_w;                                                                              \
      int a = ra * in_w + ca, b = a + rs * in_w;                                                                                  \
      y[i] = h0 * (w0 * src[a] + w1 * src[a + cs]) + h1 * (w0 * src[b] + w1 * src[b + cs]);                                       \
    }                                                                                                                             \
  }                                                                                                                               \
  extern "C" __global__ void interp_backward_##S(int n, int in_h, int in_w, int out_h, int out_w,                                 \
                                                 const T *rows, const T *cols, const T *dy, T *dx) {                              \
    KERNEL_LOOP(i, n) {                                                                                                           \
      int j = i % out_w, r = i / out_w % out_h, p = i / out_w / out_h;                                                            \
      int ra = (int)rows[3 * r], rs = (int)rows[3 * r + 1], ca = (int)cols[3 * j], cs = (int)cols[3 * j + 1];                     \
      T h1 = rows[3 * r + 2], h0 = 1 - h1, w1 = cols[3 * j + 2], w0 = 1 - w1, d = dy[i];                                          \
      T *src = dx + (long long)p * in_h * in_w;                                                                                   \
      int a = ra * in_w + ca, b = a + rs * in_w;                                                                                  \
      atomicAdd(src + a, h0 * w0 * d);                                                                                            \
      atomicAdd(src + a + cs, h0 * w1 * d);                                                                                       \
      atomicAdd(src + b, h1 * w0 * d);                                                                                            \
      atomicAdd(src + b + cs, h1 * w1 * d);                                                                                       \
    }                                                                                                                             \
  }                                                                                                                               \
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
BOTH_TYPES(FORKS_TRAIN)
