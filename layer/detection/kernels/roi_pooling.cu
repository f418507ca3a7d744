// Kernels of Faster R-CNN's ROIPooling layer.

#define ROI_POOLING(T, S)                                                                           \
  /* ROIPooling: one thread per output; regions (batch, x1, y1, x2, y2). */                         \
  extern "C" __global__ void roi_pool_forward_##S(int n, const T *x, T scale, int channels,         \
                                                  int height, int width, int ph_, int pw_,          \
                                                  const T *rois, T *y, T *argmax) {                 \
    KERNEL_LOOP(i, n) {                                                                             \
      int pw = i % pw_, ph = i / pw_ % ph_, c = i / pw_ / ph_ % channels;                           \
      int r = i / pw_ / ph_ / channels;                                                             \
      const T *roi = rois + r * 5;                                                                  \
      int img = (int)roi[0];                                                                        \
      int x1 = (int)round(roi[1] * scale), y1 = (int)round(roi[2] * scale);                         \
      int x2 = (int)round(roi[3] * scale), y2 = (int)round(roi[4] * scale);                         \
      T bh = (T)max(y2 - y1 + 1, 1) / (T)ph_, bw = (T)max(x2 - x1 + 1, 1) / (T)pw_;                 \
      int h0 = min(max((int)floor((T)ph * bh) + y1, 0), height);                                    \
      int h1 = min(max((int)ceil((T)(ph + 1) * bh) + y1, 0), height);                               \
      int w0 = min(max((int)floor((T)pw * bw) + x1, 0), width);                                     \
      int w1 = min(max((int)ceil((T)(pw + 1) * bw) + x1, 0), width);                                \
      T best = (h1 > h0 && w1 > w0) ? (T)-3.402823466e+38 : (T)0;                                   \
      int at = -1;                                                                                  \
      const T *src = x + (img * channels + c) * height * width;                                     \
      for (int hh = h0; hh < h1; ++hh)                                                              \
        for (int ww = w0; ww < w1; ++ww) {                                                          \
          T v = src[hh * width + ww];                                                               \
          if (v > best) {                                                                           \
            best = v;                                                                               \
            at = hh * width + ww;                                                                   \
          }                                                                                         \
        }                                                                                           \
      y[i] = best;                                                                                  \
      argmax[i] = (T)at;                                                                            \
    }                                                                                               \
  }                                                                                                 \
  extern "C" __global__ void roi_pool_backward_##S(int n, const T *dy, const T *argmax,             \
                                                   const T *rois, int channels, int plane,          \
                                                   int bins, T *dx) {                               \
    KERNEL_LOOP(i, n) {                                                                             \
      int at = (int)argmax[i];                                                                      \
      if (at < 0) continue;                                                                         \
      int r = i / bins / channels, c = i / bins % channels;                                         \
      int img = (int)rois[r * 5];                                                                   \
      atomicAdd(dx + (img * channels + c) * plane + at, dy[i]);                                     \
    }                                                                                               \
  }
BOTH_TYPES(ROI_POOLING)
