// Layout changes for the batched GPU convolution (convolution_cuda.go).
// Blobs hold a chunk of nb images as [nb][m][hw]; the batched GEMMs work on
// [m][nb][hw], the "wide" layout, in which one matrix row spans the chunk.

// to_wide: wide[m][b][p] = x[b][m][p]. One thread per element.
#define CONV_BATCH(T, S)                                                                  \
  extern "C" __global__ void conv_to_wide_##S(int n, const T *x, int nb, int m, int hw,   \
                                              int x_stride, T *wide) {                    \
    KERNEL_LOOP(i, n) {                                                                   \
      int p = i % hw, b = (i / hw) % nb, c = i / (hw * nb);                               \
      wide[i] = x[(long long)b * x_stride + (long long)c * hw + p];                       \
    }                                                                                     \
  }                                                                                       \
  /* from_wide: y[b][m][p] = wide[m][b][p] (+ bias[m] when bias is not null). */          \
  extern "C" __global__ void conv_from_wide_##S(int n, const T *wide, int nb, int m,      \
                                                int hw, const T *bias, T *y,              \
                                                int y_stride) {                           \
    KERNEL_LOOP(i, n) {                                                                   \
      int p = i % hw, c = (i / hw) % m, b = i / (hw * m);                                 \
      T v = wide[((long long)c * nb + b) * hw + p];                                       \
      if (bias) v += bias[c];                                                             \
      y[(long long)b * y_stride + (long long)c * hw + p] = v;                             \
    }                                                                                     \
  }
BOTH_TYPES(CONV_BATCH)
