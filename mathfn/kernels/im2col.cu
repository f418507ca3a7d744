// im2col and col2im for package mathfn (see mathfn/im2col.go for the
// layout). The 2-D kernels take the geometry as scalars; the N-D ones take
// it by value in a ConvGeom (the Go side packs it in this field order).

#define MAX_AXES 6

struct ConvGeom {
  int n, channels;
  int in[MAX_AXES], out[MAX_AXES], kernel[MAX_AXES];
  int pad[MAX_AXES], stride[MAX_AXES], dilation[MAX_AXES];
};

// One thread per (channel, output row, output column): it writes that
// output position's entry in each of the channel's kernel-offset rows.
template <typename T>
__device__ void im2col_2d(int n, const T *im, int h, int w, int kh, int kw, int ph, int pw,
                          int sh, int sw, int dh, int dw, int oh, int ow, T *col) {
  KERNEL_LOOP(index, n) {
    int x = index % ow, y = (index / ow) % oh, c = index / (ow * oh);
    int y0 = y * sh - ph, x0 = x * sw - pw;
    T *out = col + ((long long)c * kh * kw * oh + y) * ow + x;
    const T *plane = im + (long long)c * h * w;
    for (int i = 0; i < kh; i++) {
      for (int j = 0; j < kw; j++) {
        int iy = y0 + i * dh, ix = x0 + j * dw;
        *out = (iy >= 0 && ix >= 0 && iy < h && ix < w) ? plane[iy * w + ix] : T(0);
        out += oh * ow;
      }
    }
  }
}

// One thread per image element: it sums the column entries that were taken
// from it, walking only the output positions whose windows cover it.
template <typename T>
__device__ void col2im_2d(int n, const T *col, int h, int w, int kh, int kw, int ph, int pw,
                          int sh, int sw, int dh, int dw, int oh, int ow, T *im) {
  KERNEL_LOOP(index, n) {
    int x = index % w + pw, y = (index / w) % h + ph, c = index / (w * h);
    int extent_h = (kh - 1) * dh + 1, extent_w = (kw - 1) * dw + 1;
    int y_start = y < extent_h ? 0 : (y - extent_h) / sh + 1;
    int x_start = x < extent_w ? 0 : (x - extent_w) / sw + 1;
    int y_end = min(y / sh + 1, oh), x_end = min(x / sw + 1, ow);
    T sum = 0;
    for (int oy = y_start; oy < y_end; oy++) {
      for (int ox = x_start; ox < x_end; ox++) {
        int ki = y - oy * sh, kj = x - ox * sw;
        if (ki % dh == 0 && kj % dw == 0) {
          ki /= dh;
          kj /= dw;
          sum += col[(((long long)(c * kh + ki) * kw + kj) * oh + oy) * ow + ox];
        }
      }
    }
    im[index] = sum;
  }
}

// One thread per column element.
template <typename T>
__device__ void im2col_nd(int n, const T *im, ConvGeom g, T *col) {
  int kernel_size = 1, out_size = 1;
  for (int a = 0; a < g.n; a++) { kernel_size *= g.kernel[a]; out_size *= g.out[a]; }
  KERNEL_LOOP(index, n) {
    int row = index / out_size, pos = index % out_size;
    int c = row / kernel_size, krem = row % kernel_size;
    int k[MAX_AXES], o[MAX_AXES];
    for (int a = g.n - 1; a >= 0; a--) {
      k[a] = krem % g.kernel[a]; krem /= g.kernel[a];
      o[a] = pos % g.out[a]; pos /= g.out[a];
    }
    long long im_index = c;
    bool inside = true;
    for (int a = 0; a < g.n; a++) {
      int x = o[a] * g.stride[a] - g.pad[a] + k[a] * g.dilation[a];
      inside = inside && x >= 0 && x < g.in[a];
      im_index = im_index * g.in[a] + x;
    }
    col[index] = inside ? im[im_index] : T(0);
  }
}

// One thread per image element: it tries every kernel offset and keeps
// those that land on an output position.
template <typename T>
__device__ void col2im_nd(int n, const T *col, ConvGeom g, T *im) {
  int kernel_size = 1, out_size = 1, in_size = 1;
  for (int a = 0; a < g.n; a++) { kernel_size *= g.kernel[a]; out_size *= g.out[a]; in_size *= g.in[a]; }
  KERNEL_LOOP(index, n) {
    int c = index / in_size, rem = index % in_size;
    int x[MAX_AXES];
    for (int a = g.n - 1; a >= 0; a--) { x[a] = rem % g.in[a]; rem /= g.in[a]; }
    T sum = 0;
    for (int kidx = 0; kidx < kernel_size; kidx++) {
      int krem = kidx, pos = 0, scale = 1;
      bool hit = true;
      for (int a = g.n - 1; a >= 0 && hit; a--) {
        int k = krem % g.kernel[a]; krem /= g.kernel[a];
        int t = x[a] + g.pad[a] - k * g.dilation[a];
        if (t < 0 || t % g.stride[a] != 0 || t / g.stride[a] >= g.out[a]) { hit = false; break; }
        pos += (t / g.stride[a]) * scale;
        scale *= g.out[a];
      }
      if (hit) sum += col[((long long)c * kernel_size + kidx) * out_size + pos];
    }
    im[index] = sum;
  }
}

// Batched 2-D im2col: nb images, im_stride elements apart, into one column
// buffer whose columns run image by image (entry (row, b*oh*ow + p)), so a
// single GEMM covers the whole batch. One thread per (channel, image,
// output position).
template <typename T>
__device__ void im2col_2d_batch(int n, const T *im, int im_stride, int nb, int h, int w,
                                int kh, int kw, int ph, int pw, int sh, int sw, int dh, int dw,
                                int oh, int ow, T *col) {
  long long ohw = (long long)oh * ow, row_len = ohw * nb;
  KERNEL_LOOP(index, n) {
    int x = index % ow, y = (index / ow) % oh;
    int b = (index / ohw) % nb, c = index / (ohw * nb);
    int y0 = y * sh - ph, x0 = x * sw - pw;
    T *out = col + (long long)c * kh * kw * row_len + b * ohw + y * ow + x;
    const T *plane = im + (long long)b * im_stride + (long long)c * h * w;
    for (int i = 0; i < kh; i++) {
      for (int j = 0; j < kw; j++) {
        int iy = y0 + i * dh, ix = x0 + j * dw;
        *out = (iy >= 0 && ix >= 0 && iy < h && ix < w) ? plane[iy * w + ix] : T(0);
        out += row_len;
      }
    }
  }
}

// Batched 2-D col2im, the reverse of im2col_2d_batch: one thread per image
// element of every image.
template <typename T>
__device__ void col2im_2d_batch(int n, const T *col, int nb, int channels, int h, int w,
                                int kh, int kw, int ph, int pw, int sh, int sw, int dh, int dw,
                                int oh, int ow, T *im, int im_stride) {
  long long ohw = (long long)oh * ow, row_len = ohw * nb, chw = (long long)channels * h * w;
  KERNEL_LOOP(index, n) {
    int b = index / chw;
    long long rem = index % chw;
    int x = rem % w + pw, y = (rem / w) % h + ph, c = rem / (w * h);
    int extent_h = (kh - 1) * dh + 1, extent_w = (kw - 1) * dw + 1;
    int y_start = y < extent_h ? 0 : (y - extent_h) / sh + 1;
    int x_start = x < extent_w ? 0 : (x - extent_w) / sw + 1;
    int y_end = min(y / sh + 1, oh), x_end = min(x / sw + 1, ow);
    const T *cb = col + b * ohw;
    T sum = 0;
    for (int oy = y_start; oy < y_end; oy++) {
      for (int ox = x_start; ox < x_end; ox++) {
        int ki = y - oy * sh, kj = x - ox * sw;
        if (ki % dh == 0 && kj % dw == 0) {
          ki /= dh;
          kj /= dw;
          sum += cb[((long long)(c * kh + ki) * kw + kj) * row_len + oy * ow + ox];
        }
      }
    }
    im[(long long)b * im_stride + rem] = sum;
  }
}

#define IM2COL_KERNELS(T, S)                                                                   \
  extern "C" __global__ void im2col_2d_##S(int n, const T *im, int h, int w, int kh, int kw,   \
      int ph, int pw, int sh, int sw, int dh, int dw, int oh, int ow, T *col) {                \
    im2col_2d<T>(n, im, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh, ow, col);                    \
  }                                                                                            \
  extern "C" __global__ void col2im_2d_##S(int n, const T *col, int h, int w, int kh, int kw,  \
      int ph, int pw, int sh, int sw, int dh, int dw, int oh, int ow, T *im) {                 \
    col2im_2d<T>(n, col, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh, ow, im);                    \
  }                                                                                            \
  extern "C" __global__ void im2col_2d_batch_##S(int n, const T *im, int im_stride, int nb,    \
      int h, int w, int kh, int kw, int ph, int pw, int sh, int sw, int dh, int dw, int oh,    \
      int ow, T *col) {                                                                        \
    im2col_2d_batch<T>(n, im, im_stride, nb, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh, ow, col);\
  }                                                                                            \
  extern "C" __global__ void col2im_2d_batch_##S(int n, const T *col, int nb, int channels,    \
      int h, int w, int kh, int kw, int ph, int pw, int sh, int sw, int dh, int dw, int oh,    \
      int ow, T *im, int im_stride) {                                                          \
    col2im_2d_batch<T>(n, col, nb, channels, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh, ow, im, \
                       im_stride);                                                             \
  }                                                                                            \
  extern "C" __global__ void im2col_nd_##S(int n, const T *im, ConvGeom g, T *col) {           \
    im2col_nd<T>(n, im, g, col);                                                               \
  }                                                                                            \
  extern "C" __global__ void col2im_nd_##S(int n, const T *col, ConvGeom g, T *im) {           \
    col2im_nd<T>(n, col, g, im);                                                               \
  }
BOTH_TYPES(IM2COL_KERNELS)
