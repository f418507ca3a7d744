// A data layer's transformation on the device (data.PixelArithmetic's
// ApplyWindow, which computes the same): items of channels x oh x ow
// 8-bit values, each planned window's bytes in turn in pix; params holds
// each item's mirror flag and the window's corner (row, column) in its
// source. out[i][c][y][x] = (pix[i][c][y][x'] - m) * scale, x' = x or,
// mirrored, ow-1-x, m the mean blob's value at (c, row+y, column+x') when
// there is one, else mean_values[c % n_mean_values], else 0.

#define TRANSFORM_PIXELS(T, S)                                                              \
  extern "C" __global__ void transform_pixels_##S(                                          \
      int n, int channels, int oh, int ow, const unsigned char *pix, const int *params,     \
      const T *mean, int mean_h, int mean_w, const T *mean_values, int n_mean_values,       \
      T scale, T *out) {                                                                    \
    KERNEL_LOOP(i, n) {                                                                     \
      int x = i % ow;                                                                       \
      int y = (i / ow) % oh;                                                                \
      int c = (i / ((long long)ow * oh)) % channels;                                        \
      long long item = i / ((long long)ow * oh * channels);                                 \
      const int *p = params + 3 * item;                                                     \
      int sx = p[0] ? ow - 1 - x : x;                                                       \
      T v = (T)pix[i - x + sx];                                                             \
      T m = 0;                                                                              \
      if (mean) {                                                                           \
        m = mean[((long long)c * mean_h + p[1] + y) * mean_w + p[2] + sx];                  \
      } else if (n_mean_values > 0) {                                                       \
        m = mean_values[c % n_mean_values];                                                 \
      }                                                                                     \
      out[i] = (v - m) * scale;                                                             \
    }                                                                                       \
  }
BOTH_TYPES(TRANSFORM_PIXELS)

// The same for whole images decoded on the device (nvJPEG): items of
// channels planes of ih x iw bytes one after another in images, each
// item's window at its corner (params' row and column) read from there.
#define TRANSFORM_DECODED(T, S)                                                             \
  extern "C" __global__ void transform_decoded_##S(                                         \
      int n, int channels, int oh, int ow, int ih, int iw, const unsigned char *images,     \
      const int *params, const T *mean, int mean_h, int mean_w, const T *mean_values,       \
      int n_mean_values, T scale, T *out) {                                                 \
    KERNEL_LOOP(i, n) {                                                                     \
      int x = i % ow;                                                                       \
      int y = (i / ow) % oh;                                                                \
      int c = (i / ((long long)ow * oh)) % channels;                                        \
      long long item = i / ((long long)ow * oh * channels);                                 \
      const int *p = params + 3 * item;                                                     \
      int sx = p[0] ? ow - 1 - x : x;                                                       \
      T v = (T)images[((item * channels + c) * ih + p[1] + y) * iw + p[2] + sx];            \
      T m = 0;                                                                              \
      if (mean) {                                                                           \
        m = mean[((long long)c * mean_h + p[1] + y) * mean_w + p[2] + sx];                  \
      } else if (n_mean_values > 0) {                                                       \
        m = mean_values[c % n_mean_values];                                                 \
      }                                                                                     \
      out[i] = (v - m) * scale;                                                             \
    }                                                                                       \
  }
BOTH_TYPES(TRANSFORM_DECODED)
