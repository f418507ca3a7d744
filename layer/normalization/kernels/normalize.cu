// Kernels of SSD's Normalize layer.

#define NORMALIZE(T, S)                                                                             \
  /* Normalize: one thread per group (an image, or an image's position) */                          \
  /* computes sqrt(sum x^2 + eps) over the group's channels (and positions). */                     \
  extern "C" __global__ void normalize_norms_##S(int groups, int channels, int spatial,             \
                                                 int across, const T *x, T eps, T *norm) {          \
    KERNEL_LOOP(g, groups) {                                                                        \
      double sum = 0;                                                                               \
      if (across) {                                                                                 \
        const T *p = x + g * channels * spatial;                                                    \
        for (int k = 0; k < channels * spatial; ++k) sum += (double)p[k] * p[k];                    \
      } else {                                                                                      \
        int img = g / spatial, pos = g % spatial;                                                   \
        const T *p = x + img * channels * spatial + pos;                                            \
        for (int c = 0; c < channels; ++c) sum += (double)p[c * spatial] * p[c * spatial];          \
      }                                                                                             \
      norm[g] = (T)sqrt(sum + (double)eps);                                                         \
    }                                                                                               \
  }                                                                                                 \
  extern "C" __global__ void normalize_forward_##S(int n, int channels, int spatial, int across,    \
                                                   int shared, const T *x, const T *norm,           \
                                                   const T *scale, T *y) {                          \
    KERNEL_LOOP(i, n) {                                                                             \
      int img = i / (channels * spatial), c = i / spatial % channels, pos = i % spatial;            \
      int g = across ? img : img * spatial + pos;                                                   \
      y[i] = scale[shared ? 0 : c] * x[i] / norm[g];                                                \
    }                                                                                               \
  }                                                                                                 \
  /* dots[g] = sum over the group of s * dy * x. */                                                 \
  extern "C" __global__ void normalize_dots_##S(int groups, int channels, int spatial,              \
                                                int across, int shared, const T *x, const T *dy,    \
                                                const T *scale, T *dots) {                          \
    KERNEL_LOOP(g, groups) {                                                                        \
      T sum = 0;                                                                                    \
      if (across) {                                                                                 \
        int base = g * channels * spatial;                                                          \
        for (int k = 0; k < channels * spatial; ++k)                                                \
          sum += scale[shared ? 0 : k / spatial] * dy[base + k] * x[base + k];                      \
      } else {                                                                                      \
        int img = g / spatial, pos = g % spatial;                                                   \
        for (int c = 0; c < channels; ++c) {                                                        \
          int k = (img * channels + c) * spatial + pos;                                             \
          sum += scale[shared ? 0 : c] * dy[k] * x[k];                                              \
        }                                                                                           \
      }                                                                                             \
      dots[g] = sum;                                                                                \
    }                                                                                               \
  }                                                                                                 \
  extern "C" __global__ void normalize_backward_##S(int n, int channels, int spatial, int across,   \
                                                    int shared, const T *x, const T *dy,            \
                                                    const T *norm, const T *dots, const T *scale,   \
                                                    T *dx) {                                        \
    KERNEL_LOOP(i, n) {                                                                             \
      int img = i / (channels * spatial), c = i / spatial % channels, pos = i % spatial;            \
      int g = across ? img : img * spatial + pos;                                                   \
      T nv = norm[g];                                                                               \
      dx[i] = scale[shared ? 0 : c] * dy[i] / nv - x[i] * dots[g] / (nv * nv * nv);                 \
    }                                                                                               \
  }                                                                                                 \
  /* The scale's gradient: per channel (or one for all), summed over the */                         \
  /* images and positions; accumulated as Caffe's parameter diffs are.   */                         \
  extern "C" __global__ void normalize_scale_diff_##S(int num, int channels, int spatial,           \
                                                      int across, int shared, const T *x,           \
                                                      const T *dy, const T *norm, T *ds) {          \
    KERNEL_LOOP(c, shared ? 1 : channels) {                                                         \
      T sum = 0;                                                                                    \
      for (int img = 0; img < num; ++img) {                                                         \
        for (int cc = shared ? 0 : c; cc < (shared ? channels : c + 1); ++cc) {                     \
          for (int pos = 0; pos < spatial; ++pos) {                                                 \
            int k = (img * channels + cc) * spatial + pos;                                          \
            sum += dy[k] * x[k] / norm[across ? img : img * spatial + pos];                         \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
      ds[c] += sum;                                                                                 \
    }                                                                                               \
  }
BOTH_TYPES(NORMALIZE)
