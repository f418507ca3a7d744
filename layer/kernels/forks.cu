// Kernels of the Caffe forks' layers: SSD's Permute and Normalize, SENet's
// Axpy, Faster R-CNN's ROIPooling.

#define PERMUTE_MAX_AXES 32  // blob.MaxAxes

// PermuteSteps: for each top axis the bottom's stride along it and the
// top's own stride.
struct PermuteSteps {
  int axes;
  int old_steps[PERMUTE_MAX_AXES];
  int new_steps[PERMUTE_MAX_AXES];
};

#define FORKS(T, S)                                                                               \
  /* Permute: top element i is the bottom's at the sum over axes of        */                    \
  /* (i / new_steps[a] % dim) * old_steps[a]; backward writes it back.    */                    \
  extern "C" __global__ void permute_##S(int n, PermuteSteps g, T *x, T *y, int backward) {       \
    KERNEL_LOOP(i, n) {                                                                           \
      long long src = 0, rest = i;                                                                \
      for (int a = 0; a < g.axes; ++a) {                                                          \
        int s = g.new_steps[a];                                                                   \
        src += (rest / s) * g.old_steps[a];                                                       \
        rest %= s;                                                                                \
      }                                                                                           \
      if (backward) {                                                                             \
        x[src] = y[i];                                                                            \
      } else {                                                                                    \
        y[i] = x[src];                                                                            \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* Axpy: out = a[plane] * x + y. */                                                             \
  extern "C" __global__ void axpy_forward_##S(int n, int spatial, const T *a, const T *x,         \
                                              const T *y, T *out) {                               \
    KERNEL_LOOP(i, n) { out[i] = a[i / spatial] * x[i] + y[i]; }                                  \
  }                                                                                               \
  /* Axpy backward: dx = a * dtop; one thread per plane sums da. */                               \
  extern "C" __global__ void axpy_dx_##S(int n, int spatial, const T *a, const T *dtop, T *dx) {  \
    KERNEL_LOOP(i, n) { dx[i] = a[i / spatial] * dtop[i]; }                                       \
  }                                                                                               \
  extern "C" __global__ void axpy_da_##S(int planes, int spatial, const T *dtop, const T *x,      \
                                         T *da) {                                                 \
    KERNEL_LOOP(p, planes) {                                                                      \
      T sum = 0;                                                                                  \
      for (int k = 0; k < spatial; ++k) sum += dtop[p * spatial + k] * x[p * spatial + k];        \
      da[p] = sum;                                                                                \
    }                                                                                             \
  }                                                                                               \
  /* Normalize: one thread per group (an image, or an image's position) */                       \
  /* computes sqrt(sum x^2 + eps) over the group's channels (and positions). */                   \
  extern "C" __global__ void normalize_norms_##S(int groups, int channels, int spatial,          \
                                                 int across, const T *x, T eps, T *norm) {        \
    KERNEL_LOOP(g, groups) {                                                                      \
      double sum = 0;                                                                             \
      if (across) {                                                                               \
        const T *p = x + g * channels * spatial;                                                  \
        for (int k = 0; k < channels * spatial; ++k) sum += (double)p[k] * p[k];                  \
      } else {                                                                                    \
        int img = g / spatial, pos = g % spatial;                                                 \
        const T *p = x + img * channels * spatial + pos;                                          \
        for (int c = 0; c < channels; ++c) sum += (double)p[c * spatial] * p[c * spatial];        \
      }                                                                                           \
      norm[g] = (T)sqrt(sum + (double)eps);                                                       \
    }                                                                                             \
  }                                                                                               \
  extern "C" __global__ void normalize_forward_##S(int n, int channels, int spatial, int across,  \
                                                   int shared, const T *x, const T *norm,         \
                                                   const T *scale, T *y) {                        \
    KERNEL_LOOP(i, n) {                                                                           \
      int img = i / (channels * spatial), c = i / spatial % channels, pos = i % spatial;          \
      int g = across ? img : img * spatial + pos;                                                 \
      y[i] = scale[shared ? 0 : c] * x[i] / norm[g];                                              \
    }                                                                                             \
  }                                                                                               \
  /* dots[g] = sum over the group of s * dy * x. */                                               \
  extern "C" __global__ void normalize_dots_##S(int groups, int channels, int spatial,           \
                                                int across, int shared, const T *x, const T *dy,  \
                                                const T *scale, T *dots) {                        \
    KERNEL_LOOP(g, groups) {                                                                      \
      T sum = 0;                                                                                  \
      if (across) {                                                                               \
        int base = g * channels * spatial;                                                        \
        for (int k = 0; k < channels * spatial; ++k)                                              \
          sum += scale[shared ? 0 : k / spatial] * dy[base + k] * x[base + k];                    \
      } else {                                                                                    \
        int img = g / spatial, pos = g % spatial;                                                 \
        for (int c = 0; c < channels; ++c) {                                                      \
          int k = (img * channels + c) * spatial + pos;                                           \
          sum += scale[shared ? 0 : c] * dy[k] * x[k];                                            \
        }                                                                                         \
      }                                                                                           \
      dots[g] = sum;                                                                              \
    }                                                                                             \
  }                                                                                               \
  extern "C" __global__ void normalize_backward_##S(int n, int channels, int spatial, int across, \
                                                    int shared, const T *x, const T *dy,          \
                                                    const T *norm, const T *dots, const T *scale, \
                                                    T *dx) {                                      \
    KERNEL_LOOP(i, n) {                                                                           \
      int img = i / (channels * spatial), c = i / spatial % channels, pos = i % spatial;          \
      int g = across ? img : img * spatial + pos;                                                 \
      T nv = norm[g];                                                                             \
      dx[i] = scale[shared ? 0 : c] * dy[i] / nv - x[i] * dots[g] / (nv * nv * nv);              \
    }                                                                                             \
  }                                                                                               \
  /* The scale's gradient: per channel (or one for all), summed over the */                      \
  /* images and positions; accumulated as Caffe's parameter diffs are.   */                      \
  extern "C" __global__ void normalize_scale_diff_##S(int num, int channels, int spatial,        \
                                                      int across, int shared, const T *x,         \
                                                      const T *dy, const T *norm, T *ds) {        \
    KERNEL_LOOP(c, shared ? 1 : channels) {                                                       \
      T sum = 0;                                                                                  \
      for (int img = 0; img < num; ++img) {                                                       \
        for (int cc = shared ? 0 : c; cc < (shared ? channels : c + 1); ++cc) {                   \
          for (int pos = 0; pos < spatial; ++pos) {                                               \
            int k = (img * channels + cc) * spatial + pos;                                        \
            sum += dy[k] * x[k] / norm[across ? img : img * spatial + pos];                       \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
      ds[c] += sum;                                                                               \
    }                                                                                             \
  }                                                                                               \
  /* ROIPooling: one thread per output; regions (batch, x1, y1, x2, y2). */                      \
  extern "C" __global__ void roi_pool_forward_##S(int n, const T *x, T scale, int channels,       \
                                                  int height, int width, int ph_, int pw_,        \
                                                  const T *rois, T *y, T *argmax) {               \
    KERNEL_LOOP(i, n) {                                                                           \
      int pw = i % pw_, ph = i / pw_ % ph_, c = i / pw_ / ph_ % channels;                         \
      int r = i / pw_ / ph_ / channels;                                                           \
      const T *roi = rois + r * 5;                                                                \
      int img = (int)roi[0];                                                                      \
      int x1 = (int)round(roi[1] * scale), y1 = (int)round(roi[2] * scale);                       \
      int x2 = (int)round(roi[3] * scale), y2 = (int)round(roi[4] * scale);                       \
      T bh = (T)max(y2 - y1 + 1, 1) / (T)ph_, bw = (T)max(x2 - x1 + 1, 1) / (T)pw_;               \
      int h0 = min(max((int)floor((T)ph * bh) + y1, 0), height);                                  \
      int h1 = min(max((int)ceil((T)(ph + 1) * bh) + y1, 0), height);                             \
      int w0 = min(max((int)floor((T)pw * bw) + x1, 0), width);                                   \
      int w1 = min(max((int)ceil((T)(pw + 1) * bw) + x1, 0), width);                              \
      T best = (h1 > h0 && w1 > w0) ? (T)-3.402823466e+38 : (T)0;                                 \
      int at = -1;                                                                                \
      const T *src = x + (img * channels + c) * height * width;                                   \
      for (int hh = h0; hh < h1; ++hh)                                                            \
        for (int ww = w0; ww < w1; ++ww) {                                                        \
          T v = src[hh * width + ww];                                                             \
          if (v > best) {                                                                         \
            best = v;                                                                             \
            at = hh * width + ww;                                                                 \
          }                                                                                       \
        }                                                                                         \
      y[i] = best;                                                                                \
      argmax[i] = (T)at;                                                                          \
    }                                                                                             \
  }                                                                                               \
  extern "C" __global__ void roi_pool_backward_##S(int n, const T *dy, const T *argmax,          \
                                                   const T *rois, int channels, int plane,        \
                                                   int bins, T *dx) {                             \
    KERNEL_LOOP(i, n) {                                                                           \
      int at = (int)argmax[i];                                                                    \
      if (at < 0) continue;                                                                       \
      int r = i / bins / channels, c = i / bins % channels;                                       \
      int img = (int)rois[r * 5];                                                                 \
      atomicAdd(dx + (img * channels + c) * plane + at, dy[i]);                                   \
    }                                                                                             \
  }
BOTH_TYPES(FORKS)
