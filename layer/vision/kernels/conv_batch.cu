// Layout changes for the batched GPU convolution (convolution_cuda.go).
// Blobs hold a chunk of nb images as [nb][m][hw]; the batched GEMMs work on
// [m][nb][hw], the "wide" layout, in which one matrix row spans the chunk.

// to_wide: wide[m][b][p] = x[b][m][p]. One thread per element.
template <typename T>
__device__ void to_wide(int n, const T *x, int nb, int m, int hw, int x_stride, T *wide) {
  KERNEL_LOOP(i, n) {
    int q = (int)i / hw, p = (int)i - q * hw, b = q % nb, c = q / nb;
    wide[i] = x[(long long)b * x_stride + (long long)c * hw + p];
  }
}

// from_wide: y[b][m][p] = wide[m][b][p] (+ bias[m] when BIAS and bias is
// not null).
template <typename T, bool BIAS>
__device__ void from_wide(int n, const T *wide, int nb, int m, int hw, const T *bias, T *y, int y_stride) {
  KERNEL_LOOP(i, n) {
    int q = (int)i / hw, p = (int)i - q * hw, c = q % m, b = q / m;
    T v = wide[((long long)c * nb + b) * hw + p];
    if (BIAS && bias) v += bias[c];
    y[(long long)b * y_stride + (long long)c * hw + p] = v;
  }
}

#define CONV_BATCH(T, S)                                                                  \
  extern "C" __global__ void conv_to_wide_##S(int n, const T *x, int nb, int m, int hw,   \
                                              int x_stride, T *wide) {                    \
    to_wide<T>(n, x, nb, m, hw, x_stride, wide);                                          \
  }                                                                                       \
  extern "C" __global__ void conv_from_wide_##S(int n, const T *wide, int nb, int m,      \
                                                int hw, const T *bias, T *y,              \
                                                int y_stride) {                           \
    from_wide<T, true>(n, wide, nb, m, hw, bias, y, y_stride);                            \
  }
BOTH_TYPES(CONV_BATCH)
// The 16-bit lowered way's (convolution_lowered.go): FLOAT16 or BFLOAT16
// values moved as their bits, with no bias.
extern "C" __global__ void conv_to_wide_h16_f32(int n, const half16 *x, int nb, int m, int hw, int x_stride,
                                                half16 *wide) {
  to_wide<half16>(n, x, nb, m, hw, x_stride, wide);
}
extern "C" __global__ void conv_from_wide_h16_f32(int n, const half16 *wide, int nb, int m, int hw,
                                                  const half16 *bias, half16 *y, int y_stride) {
  from_wide<half16, false>(n, wide, nb, m, hw, bias, y, y_stride);
}

// Strided 1x1 convolutions through GEMMs (convolution_pointwise.go), 2-D.
// subsample: xs[bc][i][j] = x[bc][i*sh][j*sw], the pixels a 1x1 kernel of
// stride (sh, sw) reads; bc runs over images and channels together. One
// thread per element of xs (n = images*channels*ho*wo).
#define CONV_STRIDED(T, S)                                                                \
  extern "C" __global__ void conv_subsample_##S(int n, const T *x, int h, int w, int ho,  \
                                                int wo, int sh, int sw, T *xs) {          \
    KERNEL_LOOP(i, n) {                                                                   \
      int q = (int)i / wo, j = (int)i - q * wo, r = q % ho; /* 32-bit division */         \
      long long bc = q / ho;                                                              \
      xs[i] = x[(bc * h + r * sh) * w + j * sw];                                          \
    }                                                                                     \
  }                                                                                       \
  /* upsample: subsample's adjoint, dx = dxs on the stride's pixels and 0 elsewhere.   \
     One thread per element of dx (n = images*channels*h*w). */                           \
  extern "C" __global__ void conv_upsample_##S(int n, const T *dxs, int h, int w, int ho, \
                                               int wo, int sh, int sw, T *dx) {           \
    KERNEL_LOOP(i, n) {                                                                   \
      int q = (int)i / w, c = (int)i - q * w, r = q % h; /* 32-bit division */            \
      long long bc = q / h;                                                               \
      T v = 0;                                                                            \
      if (r % sh == 0 && c % sw == 0 && r / sh < ho && c / sw < wo)                       \
        v = dxs[(bc * ho + r / sh) * wo + c / sw];                                        \
      dx[i] = v;                                                                          \
    }                                                                                     \
  }
BOTH_TYPES(CONV_STRIDED)
// The 16-bit pointwise way's (a FLOAT16 or BFLOAT16 value moved as its
// bits; 0 is +0 in both).
CONV_STRIDED(unsigned short, h16_f32)
