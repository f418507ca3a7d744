// Kernels of PSPNet's Interp layer.

#define INTERP(T, S)                                                                                           \
  /* Interp (PSPNet, DeepLab): bilinear taps per output row and column,  */                                    \
  /* each (first source index, step to the second, second's weight).      */                                   \
  extern "C" __global__ void interp_forward_##S(int n, int in_h, int in_w, int out_h, int out_w,               \
                                                const T *rows, const T *cols, const T *x, T *y) {              \
    KERNEL_LOOP(i, n) {                                                                                        \
      int j = i % out_w, r = i / out_w % out_h, p = i / out_w / out_h;                                         \
      int ra = (int)rows[3 * r], rs = (int)rows[3 * r + 1], ca = (int)cols[3 * j], cs = (int)cols[3 * j + 1];  \
      T h1 = rows[3 * r + 2], h0 = 1 - h1, w1 = cols[3 * j + 2], w0 = 1 - w1;                                  \
      const T *src = x + (long long)p * in_h * in_w;                                                           \
      int a = ra * in_w + ca, b = a + rs * in_w;                                                               \
      y[i] = h0 * (w0 * src[a] + w1 * src[a + cs]) + h1 * (w0 * src[b] + w1 * src[b + cs]);                    \
    }                                                                                                          \
  }                                                                                                            \
  extern "C" __global__ void interp_backward_##S(int n, int in_h, int in_w, int out_h, int out_w,              \
                                                 const T *rows, const T *cols, const T *dy, T *dx) {           \
    KERNEL_LOOP(i, n) {                                                                                        \
      int j = i % out_w, r = i / out_w % out_h, p = i / out_w / out_h;                                         \
      int ra = (int)rows[3 * r], rs = (int)rows[3 * r + 1], ca = (int)cols[3 * j], cs = (int)cols[3 * j + 1];  \
      T h1 = rows[3 * r + 2], h0 = 1 - h1, w1 = cols[3 * j + 2], w0 = 1 - w1, d = dy[i];                       \
      T *src = dx + (long long)p * in_h * in_w;                                                                \
      int a = ra * in_w + ca, b = a + rs * in_w;                                                               \
      atomicAdd(src + a, h0 * w0 * d);                                                                         \
      atomicAdd(src + a + cs, h0 * w1 * d);                                                                    \
      atomicAdd(src + b, h1 * w0 * d);                                                                         \
      atomicAdd(src + b + cs, h1 * w1 * d);                                                                    \
    }                                                                                                          \
  }
BOTH_TYPES(INTERP)
