// The lowered way through convolutions of few channels
// (convolution_lowered.go): a chunk of nb images through im2col into a
// column matrix of channels*kh*kw rows whose rows span the chunk, entry
// (r, b*oh*ow + p), the wide layout of conv_batch.cu, so that one GEMM
// covers the chunk; and col2im back for the bottom gradient.

// The geometry, packed by the Go side in this field order.
struct LowGeom {
  int channels, h, w, kh, kw, ph, pw, sh, sw, dh, dw, oh, ow;
};

// low_im2col: one thread per (channel, image, output pixel), writing the
// pixel's entry in each of the channel's kh*kw rows; consecutive threads
// write consecutive entries of a row. E is the stored element, copied as
// is (0 is +0 in every type).
template <typename E>
__device__ void low_im2col(int n, const E *x, int x_stride, int nb, LowGeom g, E *col) {
  int ohw = g.oh * g.ow;
  long long row = (long long)ohw * nb;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / ohw, p = j - q * ohw;  // 32-bit division: n is an int
    int b = q % nb, c = q / nb;
    int oy = p / g.ow, ox = p - oy * g.ow;
    int y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const E *plane = x + (long long)b * x_stride + (long long)c * g.h * g.w;
    E *out = col + (long long)c * g.kh * g.kw * row + (long long)b * ohw + p;
    for (int ki = 0; ki < g.kh; ki++) {
      int iy = y0 + ki * g.dh;
      bool rowIn = iy >= 0 && iy < g.h;
      for (int kj = 0; kj < g.kw; kj++) {
        int ix = x0 + kj * g.dw;
        *out = (rowIn && ix >= 0 && ix < g.w) ? plane[iy * g.w + ix] : E(0);
        out += row;
      }
    }
  }
}

// low_col2im: one thread per bottom element of the chunk, summing in P::T
// the column entries taken from it, over the output pixels whose windows
// cover it.
template <typename P>
__device__ void low_col2im(int n, const typename P::E *col, int nb, LowGeom g, typename P::E *x,
                           int x_stride) {
  typedef typename P::T T;
  int ohw = g.oh * g.ow, chw = g.channels * g.h * g.w;
  long long row = (long long)ohw * nb;
  int extent_h = (g.kh - 1) * g.dh + 1, extent_w = (g.kw - 1) * g.dw + 1;
  KERNEL_LOOP(i, n) {
    int j = (int)i, b = j / chw, rem = j - b * chw;
    int q = rem / g.w, xw = rem - q * g.w + g.pw;
    int yh = q % g.h + g.ph, c = q / g.h;
    int y_start = yh < extent_h ? 0 : (yh - extent_h) / g.sh + 1;
    int x_start = xw < extent_w ? 0 : (xw - extent_w) / g.sw + 1;
    int y_end = min(yh / g.sh + 1, g.oh), x_end = min(xw / g.sw + 1, g.ow);
    const typename P::E *cb = col + (long long)b * ohw;
    T sum = 0;
    for (int oy = y_start; oy < y_end; oy++) {
      for (int ox = x_start; ox < x_end; ox++) {
        int ki = yh - oy * g.sh, kj = xw - ox * g.sw;
        if (ki % g.dh == 0 && kj % g.dw == 0) {
          long long r = (long long)(c * g.kh + ki / g.dh) * g.kw + kj / g.dw;
          sum += P::ld(cb[r * row + oy * g.ow + ox]);
        }
      }
    }
    x[(long long)b * x_stride + rem] = P::st(sum);
  }
}

// low_pad_rows: wp[i][j] = w[i][j] for j < rows, 0 up to kp: the weights
// with rows padded to kp elements (a multiple of 8), as the leading
// dimension of cuBLAS's tensor-core GEMMs wants it. E is copied as is.
template <typename E>
__device__ void low_pad_rows(int n, const E *w, int rows, int kp, E *wp) {
  KERNEL_LOOP(i, n) {
    int r = (int)i / kp, j = (int)i - r * kp;
    wp[i] = j < rows ? w[(long long)r * rows + j] : E(0);
  }
}

// low_add_rows: dw[i][j] += part[i][j], part's rows kp long.
template <typename T>
__device__ void low_add_rows(int n, const T *part, int rows, int kp, T *dw) {
  KERNEL_LOOP(i, n) {
    int r = (int)i / rows, j = (int)i - r * rows;
    dw[i] += part[(long long)r * kp + j];
  }
}

#define LOW_IM2COL(E, S)                                                                            \
  extern "C" __global__ void low_im2col_##S(int n, const E *x, int x_stride, int nb, LowGeom g, E *col) { \
    low_im2col<E>(n, x, x_stride, nb, g, col);                                                      \
  }                                                                                                 \
  extern "C" __global__ void low_pad_rows_##S(int n, const E *w, int rows, int kp, E *wp) {          \
    low_pad_rows<E>(n, w, rows, kp, wp);                                                            \
  }
LOW_IM2COL(float, f32)
LOW_IM2COL(double, f64)
LOW_IM2COL(half16, h16_f32)

#define LOW_ADD(T, S)                                                                               \
  extern "C" __global__ void low_add_rows_##S(int n, const T *part, int rows, int kp, T *dw) {       \
    low_add_rows<T>(n, part, rows, kp, dw);                                                         \
  }
BOTH_TYPES(LOW_ADD)

#define LOW_COL2IM(P, S)                                                                            \
  extern "C" __global__ void low_col2im_##S(int n, const P::E *col, int nb, LowGeom g, P::E *x,     \
                                            int x_stride) {                                         \
    low_col2im<P>(n, col, nb, g, x, x_stride);                                                      \
  }
ALL_STORAGES(LOW_COL2IM)

// The channels-last twins (_cl): x and its gradient channels-last, the
// column matrix transposed, a row per output pixel of the chunk holding
// its window's taps in the weights' channels-last order ((ki, kj) outer,
// the channel inner) padded with zeros to kp, so that the GEMMs read and
// write the channels-last y and dy as they are.

// low_im2col_cl: a warp per row of the column matrix (an output pixel of
// the chunk), its lanes writing consecutive entries, so that each store
// instruction fills 64 bytes; each entry's place in the window comes from
// a table the block builds once in shared memory (kp ints: the tap's row
// offset ki*dh above bit 14, its column offset kj*dw in bits 4-13, the
// channel in bits 0-3; -1 for the padding), not from three divisions per
// entry. A thread per tap, writing its channels with 2-byte stores, ran
// CaffeNet's conv1 im2col at 0.5 TB/s on the H100 (0.23 ms a chunk of 56
// images). The Go side keeps the offsets within their bits
// (loweredChannelsLast).
template <typename E>
__device__ void low_im2col_cl(int nrows, const E *x, int x_stride, LowGeom g, int kp, E *col) {
  extern __shared__ int low_tab[];
  int k = g.channels * g.kh * g.kw;
  for (int j = threadIdx.x; j < kp; j += blockDim.x) {
    int v = -1;
    if (j < k) {
      int t = j / g.channels, c = j - t * g.channels, ki = t / g.kw, kj = t - ki * g.kw;
      v = ((ki * g.dh) << 14) | ((kj * g.dw) << 4) | c;
    }
    low_tab[j] = v;
  }
  __syncthreads();
  int lane = threadIdx.x & 31, ohw = g.oh * g.ow;
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
  for (int r = warp; r < nrows; r += warps) {
    int b = r / ohw, p = r - b * ohw, oy = p / g.ow, ox = p - oy * g.ow;
    int y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const E *xb = x + (long long)b * x_stride;
    E *out = col + (long long)r * kp;
    for (int j = lane; j < kp; j += 32) {
      int v = low_tab[j];
      E val = E(0);
      if (v >= 0) {
        int iy = y0 + (v >> 14), ix = x0 + ((v >> 4) & 1023);
        if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) val = xb[(iy * g.w + ix) * g.channels + (v & 15)];
      }
      out[j] = val;
    }
  }
}

// low_col2im_cl: one thread per bottom element of the chunk, summing in
// P::T the column entries taken from it, as low_col2im.
template <typename P>
__device__ void low_col2im_cl(int n, const typename P::E *col, LowGeom g, int kp, typename P::E *x,
                              int x_stride) {
  typedef typename P::T T;
  int ohw = g.oh * g.ow, hwc = g.h * g.w * g.channels;
  int extent_h = (g.kh - 1) * g.dh + 1, extent_w = (g.kw - 1) * g.dw + 1;
  KERNEL_LOOP(i, n) {
    int j = (int)i, b = j / hwc, rem = j - b * hwc;
    int q = rem / g.channels, c = rem - q * g.channels;
    int yh = q / g.w, xw = q - yh * g.w + g.pw;
    yh += g.ph;
    int y_start = yh < extent_h ? 0 : (yh - extent_h) / g.sh + 1;
    int x_start = xw < extent_w ? 0 : (xw - extent_w) / g.sw + 1;
    int y_end = min(yh / g.sh + 1, g.oh), x_end = min(xw / g.sw + 1, g.ow);
    const typename P::E *cb = col + (long long)b * ohw * kp + c;
    T sum = 0;
    for (int oy = y_start; oy < y_end; oy++) {
      for (int ox = x_start; ox < x_end; ox++) {
        int ki = yh - oy * g.sh, kj = xw - ox * g.sw;
        if (ki % g.dh == 0 && kj % g.dw == 0) {
          int t = (ki / g.dh) * g.kw + kj / g.dw;
          sum += P::ld(cb[(long long)(oy * g.ow + ox) * kp + t * g.channels]);
        }
      }
    }
    x[(long long)b * x_stride + rem] = P::st(sum);
  }
}

// low_add_rows_cl: dw[o][c][ki][kj] (Caffe's order) += part[o][(ki*kw +
// kj)*channels + c], part's rows kp long.
template <typename T>
__device__ void low_add_rows_cl(int n, const T *part, int channels, int taps, int kp, T *dw) {
  int rows = channels * taps;
  KERNEL_LOOP(i, n) {
    int o = (int)i / rows, j = (int)i - o * rows;
    int c = j / taps, t = j - c * taps;
    dw[i] += part[(long long)o * kp + t * channels + c];
  }
}

extern "C" __global__ void low_im2col_cl_h16_f32(int nrows, const half16 *x, int x_stride, LowGeom g, int kp,
                                                 half16 *col) {
  low_im2col_cl<half16>(nrows, x, x_stride, g, kp, col);
}
extern "C" __global__ void low_add_rows_cl_f32(int n, const float *part, int channels, int taps, int kp,
                                               float *dw) {
  low_add_rows_cl<float>(n, part, channels, taps, kp, dw);
}
#define LOW_COL2IM_CL(P, S)                                                                         \
  extern "C" __global__ void low_col2im_cl_##S(int n, const P::E *col, LowGeom g, int kp, P::E *x,  \
                                               int x_stride) {                                      \
    low_col2im_cl<P>(n, col, g, kp, x, x_stride);                                                   \
  }
HALF_STORAGES(LOW_COL2IM_CL)
