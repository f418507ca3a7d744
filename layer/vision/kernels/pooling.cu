// Pooling over the channel planes of a 4-D blob. Forward kernels run one
// thread per output element; backward kernels one thread per bottom
// element, which gathers from the outputs whose windows cover it (no
// atomics, and the same order of additions as the CPU half's scatter).
// Indices (MAX's mask, STOCHASTIC's sample) are plane offsets h*width + w
// stored as T, -1 for none.

// The geometry, packed by the Go side in this field order.
struct PoolGeom {
  int channels, height, width, pooled_h, pooled_w;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
};

// A window clipped to the image, [h0, h1) x [w0, w1), and its size
// clipped only to the padded image (AVE's divisor).
struct PoolWindow {
  int h0, h1, w0, w1, size;
};

__device__ PoolWindow pool_window(const PoolGeom &g, int ph, int pw) {
  PoolWindow r;
  int h0 = ph * g.stride_h - g.pad_h, w0 = pw * g.stride_w - g.pad_w;
  int h1 = min(h0 + g.kernel_h, g.height + g.pad_h), w1 = min(w0 + g.kernel_w, g.width + g.pad_w);
  r.size = (h1 - h0) * (w1 - w0);
  r.h0 = max(h0, 0);
  r.h1 = min(h1, g.height);
  r.w0 = max(w0, 0);
  r.w1 = min(w1, g.width);
  return r;
}

// The outputs whose windows cover bottom row h (or column): [start, end).
__device__ void pool_cover(int h, int kernel, int stride, int pad, int pooled, int *start, int *end) {
  int hp = h + pad;
  *start = hp < kernel ? 0 : (hp - kernel) / stride + 1;
  *end = min(hp / stride + 1, pooled);
}

// Where an output's window and values lie. Row-major (CL false): a
// thread's index j runs over (plane, ph, pw), a plane being an image's
// channel, and the values of a plane are consecutive. Channels-last (CL
// true, the order kit.Reduced computes 16-bit activations in): element
// (image, channel, h, w) is at ((image * height + h) * width + w) *
// channels + channel, and j runs over (image, ph, pw, channel), so that a
// warp's loads and stores are consecutive channels of one position. xbase
// and ybase are the offsets of the thread's plane (channel) in x and y,
// step the distance between neighbouring positions of it.
struct PoolPlace {
  int ph, pw, step;
  long long xbase, ybase;
};

template <bool CL>
__device__ __forceinline__ PoolPlace pool_out_place(int j, const PoolGeom &g) {
  PoolPlace r;
  int c = 0;
  if (CL) {
    int q = j / g.channels;
    c = j - q * g.channels;
    j = q;
  }
  int q = j / g.pooled_w;
  r.pw = j - q * g.pooled_w;
  r.ph = q % g.pooled_h;
  long long plane = q / g.pooled_h;  // an image's channel, or (CL) an image
  r.step = CL ? g.channels : 1;
  r.xbase = plane * g.height * g.width * r.step + c;
  r.ybase = plane * g.pooled_h * g.pooled_w * r.step + c;
  return r;
}

template <typename T>
__device__ void max_pool_forward(int n, const T *x, PoolGeom g, T *y, T *idx) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;  // 32-bit: n is an int, and 64-bit division is slow
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    const T *xp = x + plane * g.height * g.width;
    PoolWindow win = pool_window(g, ph, pw);
    T best = T(-3.40282346638528859811704183484516925440e+38);  // -FLT_MAX: an empty window's value, as in Caffe
    int arg = -1;
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        T v = xp[h * g.width + w];
        if (arg < 0 || v > best || best != best) {  // first maximum wins; NaNs are skipped
          best = v;
          arg = h * g.width + w;
        }
      }
    }
    y[i] = best;
    idx[i] = T(arg);
  }
}

// max_pool_forward_offsets is max_pool_forward keeping, instead of the
// plane index as T, the maximum's place in its (unclipped) window as one
// byte, (h - h_start) * kernel_w + (w - w_start), 255 for an empty window:
// a quarter of the memory for the argmax of a layer with no mask top and
// at most 255 window elements (ResNet-50's pool1 at batch 64: 12 MiB, not
// 49). P is the activations' storage (the 16-bit ones compare in float).
template <typename P, bool CL>
__device__ void max_pool_forward_offsets(int n, const typename P::E *x, PoolGeom g, typename P::E *y,
                                         unsigned char *off) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    PoolPlace at = pool_out_place<CL>((int)i, g);  // 32-bit: n is an int, and 64-bit division is slow
    const typename P::E *xp = x + at.xbase;
    PoolWindow win = pool_window(g, at.ph, at.pw);
    int hs = at.ph * g.stride_h - g.pad_h, ws = at.pw * g.stride_w - g.pad_w;
    T best = T(-3.40282346638528859811704183484516925440e+38);
    int arg = 255;
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        T v = P::ld(xp[(long long)(h * g.width + w) * at.step]);
        if (arg == 255 || v > best || best != best) {
          best = v;
          arg = (h - hs) * g.kernel_w + (w - ws);
        }
      }
    }
    y[i] = P::st(best);
    off[i] = (unsigned char)arg;
  }
}

template <typename T>
__device__ void ave_pool_forward(int n, const T *x, PoolGeom g, T *y) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;  // 32-bit: n is an int, and 64-bit division is slow
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    const T *xp = x + plane * g.height * g.width;
    PoolWindow win = pool_window(g, ph, pw);
    T sum = 0;
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) sum += xp[h * g.width + w];
    }
    int size = (win.h0 >= win.h1 || win.w0 >= win.w1) ? 1 : win.size;  // an empty window averages to 0
    y[i] = sum / T(size);
  }
}

// s holds a uniform draw per output on entry and the sampled index on exit.
template <typename T>
__device__ void sto_pool_forward_train(int n, const T *x, PoolGeom g, T *y, T *s) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;  // 32-bit: n is an int, and 64-bit division is slow
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    const T *xp = x + plane * g.height * g.width;
    PoolWindow win = pool_window(g, ph, pw);
    T sum = 0;
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) sum += xp[h * g.width + w];
    }
    T thres = s[i] * sum, cum = 0;
    int arg = -1;
    bool found = false;
    for (int h = win.h0; h < win.h1 && !found; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        arg = h * g.width + w;
        cum += xp[arg];
        if (cum >= thres) {
          found = true;
          break;
        }
      }
    }
    y[i] = arg >= 0 ? xp[arg] : T(0);
    s[i] = T(arg);
  }
}

// y = sum(x^2) / s with s = FLT_MIN + sum(x), kept for backward.
template <typename T>
__device__ void sto_pool_forward_test(int n, const T *x, PoolGeom g, T *y, T *s) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;  // 32-bit: n is an int, and 64-bit division is slow
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    const T *xp = x + plane * g.height * g.width;
    PoolWindow win = pool_window(g, ph, pw);
    T sum = T(1.17549435082228750797e-38), sq = 0;  // FLT_MIN
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        T v = xp[h * g.width + w];
        sum += v;
        sq += v * v;
      }
    }
    y[i] = sq / sum;
    s[i] = sum;
  }
}

// index_pool_gather sums dy over the at most C x C outputs [ph0, ph1) x
// [pw0, pw1) whose index is here, in the loop's order, with every load
// issued before any is compared rather than each dy load waiting on its
// index (C = 2: kernel <= 2*stride, ResNet's and CaffeNet's 3x3/2; C = 3:
// GoogLeNet's 3x3/1).
template <typename T, int C>
__device__ T index_pool_gather(const T *dy, const T *idx, long long off, int pooled_w, int ph0, int ph1,
                               int pw0, int pw1, T here) {
  T id[C * C], d[C * C], grad = 0;
#pragma unroll
  for (int k = 0; k < C * C; k++) {
    int ph = ph0 + k / C, pw = pw0 + k % C;
    bool in = ph < ph1 && pw < pw1;
    long long o = off + ph * pooled_w + pw;
    id[k] = in ? idx[o] : T(-1);
    d[k] = in ? dy[o] : T(0);
  }
#pragma unroll
  for (int k = 0; k < C * C; k++) {
    if (id[k] == here) grad += d[k];
  }
  return grad;
}

// MAX and STOCHASTIC (TRAIN): the gradients of the outputs whose index
// names this element.
template <typename T>
__device__ void index_pool_backward(int n, const T *dy, const T *idx, PoolGeom g, T *dx) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.width;  // 32-bit: n is an int, and 64-bit division is slow
    int w = j - q * g.width, h = q % g.height;
    long long plane = q / g.height;
    int ph0, ph1, pw0, pw1;
    pool_cover(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h, &ph0, &ph1);
    pool_cover(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_w, &pw0, &pw1);
    long long off = plane * g.pooled_h * g.pooled_w;
    T here = T(h * g.width + w), grad = 0;
    if (ph1 - ph0 <= 2 && pw1 - pw0 <= 2) {
      grad = index_pool_gather<T, 2>(dy, idx, off, g.pooled_w, ph0, ph1, pw0, pw1, here);
    } else if (ph1 - ph0 <= 3 && pw1 - pw0 <= 3) {
      grad = index_pool_gather<T, 3>(dy, idx, off, g.pooled_w, ph0, ph1, pw0, pw1, here);
    } else {
      for (int ph = ph0; ph < ph1; ph++) {
        for (int pw = pw0; pw < pw1; pw++) {
          long long o = off + ph * g.pooled_w + pw;
          if (idx[o] == here) grad += dy[o];
        }
      }
    }
    dx[i] = grad;
  }
}

// offset_pool_backward is index_pool_backward for the byte offsets of
// max_pool_forward_offsets: an output's gradient goes to this element when
// the output's window holds its maximum at this element's place in it.
template <typename P, bool CL>
__device__ void offset_pool_backward(int n, const typename P::E *dy, const unsigned char *idx, PoolGeom g,
                                     typename P::E *dx) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, c = 0;
    if (CL) {
      int q = j / g.channels;
      c = j - q * g.channels;
      j = q;
    }
    int q = j / g.width;
    int w = j - q * g.width, h = q % g.height;
    long long plane = q / g.height;  // an image's channel, or (CL) an image
    int step = CL ? g.channels : 1;
    int ph0, ph1, pw0, pw1;
    pool_cover(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h, &ph0, &ph1);
    pool_cover(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_w, &pw0, &pw1);
    long long off = plane * g.pooled_h * g.pooled_w * step + c;
    T grad = 0;
    for (int ph = ph0; ph < ph1; ph++) {
      int row = (h - ph * g.stride_h + g.pad_h) * g.kernel_w + w + g.pad_w;
      for (int pw = pw0; pw < pw1; pw++) {
        long long o = off + (long long)(ph * g.pooled_w + pw) * step;
        if (idx[o] == row - pw * g.stride_w) grad += P::ld(dy[o]);
      }
    }
    dx[i] = P::st(grad);
  }
}

// cover_low is the first output along one axis whose window covers
// bottom position h, given that output last (the window of last starts at
// or before h) covers it; the windows before it end earlier, so walking
// back needs no division.
__device__ __forceinline__ int cover_low(int h, int last, int kernel, int stride, int pad) {
  int lo = last;
  while (lo > 0 && (lo - 1) * stride - pad + kernel > h) lo--;
  return lo;
}

// offset_pool_tiles computes offset_pool_backward's gradients with one
// thread per output instead of per bottom element: the thread of output
// (ph, pw) writes the bottom elements from its window's start up to the
// next window's start (the last output's, to the image's end), a stride
// by stride tile, and the tiles cover the image once. Each element sums
// its covering outputs in offset_pool_backward's order (the same bits),
// but the thread finds them by walking back from its own output: no
// division per element. Per bottom element, the seven integer divisions of
// offset_pool_backward made it bound by instructions: CaffeNet's pool1
// gradient (3x3, stride 2, 256x96x55x55) took 0.95 ms in BFLOAT16.
template <typename P, bool CL>
__device__ void offset_pool_tiles(int n, const typename P::E *dy, const unsigned char *idx, PoolGeom g,
                                  typename P::E *dx) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    PoolPlace at = pool_out_place<CL>((int)i, g);
    int ph = at.ph, pw = at.pw;
    int hs = ph * g.stride_h - g.pad_h, ws = pw * g.stride_w - g.pad_w;
    int h1 = ph == g.pooled_h - 1 ? g.height : min(hs + g.stride_h, g.height);
    int w1 = pw == g.pooled_w - 1 ? g.width : min(ws + g.stride_w, g.width);
    const typename P::E *dyp = dy + at.ybase;
    const unsigned char *ip = idx + at.ybase;
    typename P::E *dxp = dx + at.xbase;
    for (int h = max(hs, 0); h < h1; h++) {
      bool hcov = h < hs + g.kernel_h;  // else no window covers row h
      int ph0 = hcov ? cover_low(h, ph, g.kernel_h, g.stride_h, g.pad_h) : ph + 1;
      for (int w = max(ws, 0); w < w1; w++) {
        T grad = 0;
        if (hcov && w < ws + g.kernel_w) {
          int pw0 = cover_low(w, pw, g.kernel_w, g.stride_w, g.pad_w);
          for (int oh = ph0; oh <= ph; oh++) {
            int row = (h - oh * g.stride_h + g.pad_h) * g.kernel_w + w + g.pad_w;
            for (int ow = pw0; ow <= pw; ow++) {
              long long o = (long long)(oh * g.pooled_w + ow) * at.step;
              if (ip[o] == row - ow * g.stride_w) grad += P::ld(dyp[o]);
            }
          }
        }
        dxp[(long long)(h * g.width + w) * at.step] = P::st(grad);
      }
    }
  }
}

template <typename T>
__device__ void ave_pool_backward(int n, const T *dy, PoolGeom g, T *dx) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.width;  // 32-bit: n is an int, and 64-bit division is slow
    int w = j - q * g.width, h = q % g.height;
    long long plane = q / g.height;
    int ph0, ph1, pw0, pw1;
    pool_cover(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h, &ph0, &ph1);
    pool_cover(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_w, &pw0, &pw1);
    long long off = plane * g.pooled_h * g.pooled_w;
    T grad = 0;
    for (int ph = ph0; ph < ph1; ph++) {
      for (int pw = pw0; pw < pw1; pw++) {
        grad += dy[off + ph * g.pooled_w + pw] / T(pool_window(g, ph, pw).size);
      }
    }
    dx[i] = grad;
  }
}

// STOCHASTIC (TEST): the derivative of sum(x^2) / s, dy * (2x - y) / s.
template <typename T>
__device__ void sto_pool_backward_test(int n, const T *dy, const T *x, const T *y, const T *s, PoolGeom g,
                                       T *dx) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.width;  // 32-bit: n is an int, and 64-bit division is slow
    int w = j - q * g.width, h = q % g.height;
    long long plane = q / g.height;
    int ph0, ph1, pw0, pw1;
    pool_cover(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h, &ph0, &ph1);
    pool_cover(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_w, &pw0, &pw1);
    long long off = plane * g.pooled_h * g.pooled_w;
    T v = x[i], grad = 0;
    for (int ph = ph0; ph < ph1; ph++) {
      for (int pw = pw0; pw < pw1; pw++) {
        long long o = off + ph * g.pooled_w + pw;
        grad += dy[o] * (2 * v - y[o]) / s[o];
      }
    }
    dx[i] = grad;
  }
}

#define POOLING(T, S)                                                                                 \
  extern "C" __global__ void max_pool_forward_##S(int n, const T *x, PoolGeom g, T *y, T *idx) {      \
    max_pool_forward<T>(n, x, g, y, idx);                                                             \
  }                                                                                                   \
  extern "C" __global__ void ave_pool_forward_##S(int n, const T *x, PoolGeom g, T *y) {              \
    ave_pool_forward<T>(n, x, g, y);                                                                  \
  }                                                                                                   \
  extern "C" __global__ void sto_pool_forward_train_##S(int n, const T *x, PoolGeom g, T *y, T *s) {  \
    sto_pool_forward_train<T>(n, x, g, y, s);                                                         \
  }                                                                                                   \
  extern "C" __global__ void sto_pool_forward_test_##S(int n, const T *x, PoolGeom g, T *y, T *s) {   \
    sto_pool_forward_test<T>(n, x, g, y, s);                                                          \
  }                                                                                                   \
  extern "C" __global__ void index_pool_backward_##S(int n, const T *dy, const T *idx, PoolGeom g,    \
                                                     T *dx) {                                         \
    index_pool_backward<T>(n, dy, idx, g, dx);                                                        \
  }                                                                                                   \
  extern "C" __global__ void ave_pool_backward_##S(int n, const T *dy, PoolGeom g, T *dx) {           \
    ave_pool_backward<T>(n, dy, g, dx);                                                               \
  }                                                                                                   \
  extern "C" __global__ void sto_pool_backward_test_##S(int n, const T *dy, const T *x, const T *y,   \
                                                        const T *s, PoolGeom g, T *dx) {              \
    sto_pool_backward_test<T>(n, dy, x, y, s, g, dx);                                                 \
  }
BOTH_TYPES(POOLING)

// The channels-last offsets' kernels on 8 channels a thread (_cl8), for
// 16-bit blobs of a multiple of 8 channels: each load and store moves 16
// bytes, the offsets 8. One channel a thread, a warp moves 64 bytes a load
// and each thread pays the index arithmetic for 2 bytes: ResNet-50's
// channels-last pool1 took 0.24 ms forward where row-major took 0.15. They
// compute the bits of the one-channel kernels, in the same order
// (common.cuh's unpack8 and pack8 move the 16 bytes).

// pool_out_place8 is pool_out_place of the first of thread j's 8
// channels.
__device__ __forceinline__ PoolPlace pool_out_place8(int j, const PoolGeom &g) {
  int c8 = g.channels >> 3, q = j / c8;  // q: the output position (image, ph, pw)
  return pool_out_place<true>(q * g.channels + (j - q * c8) * 8, g);
}

template <typename P>
__device__ void max_pool_forward_offsets_cl8(int n8, const typename P::E *x, PoolGeom g, typename P::E *y,
                                             unsigned char *off) {
  KERNEL_LOOP(i, n8) {
    PoolPlace at = pool_out_place8((int)i, g);
    const typename P::E *xp = x + at.xbase;
    PoolWindow win = pool_window(g, at.ph, at.pw);
    int hs = at.ph * g.stride_h - g.pad_h, ws = at.pw * g.stride_w - g.pad_w;
    float best[8], v[8];
    int arg[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      best[k] = -3.40282346638528859811704183484516925440e+38f;
      arg[k] = 255;
    }
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        unpack8<P>(*(const uint4 *)(xp + (long long)(h * g.width + w) * g.channels), v);
        int a = (h - hs) * g.kernel_w + (w - ws);
#pragma unroll
        for (int k = 0; k < 8; k++) {
          if (arg[k] == 255 || v[k] > best[k] || best[k] != best[k]) {
            best[k] = v[k];
            arg[k] = a;
          }
        }
      }
    }
    long long o = at.ybase + (long long)(at.ph * g.pooled_w + at.pw) * g.channels;  // the first channel's output
    *(uint4 *)(y + o) = pack8<P>(best);
    unsigned long long packed = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) packed |= (unsigned long long)(arg[k] & 255) << (8 * k);
    *(unsigned long long *)(off + o) = packed;
  }
}

template <typename P>
__device__ void offset_pool_tiles_cl8(int n8, const typename P::E *dy, const unsigned char *idx, PoolGeom g,
                                      typename P::E *dx) {
  KERNEL_LOOP(i, n8) {
    PoolPlace at = pool_out_place8((int)i, g);
    int ph = at.ph, pw = at.pw;
    int hs = ph * g.stride_h - g.pad_h, ws = pw * g.stride_w - g.pad_w;
    int h1 = ph == g.pooled_h - 1 ? g.height : min(hs + g.stride_h, g.height);
    int w1 = pw == g.pooled_w - 1 ? g.width : min(ws + g.stride_w, g.width);
    const typename P::E *dyp = dy + at.ybase;
    const unsigned char *ip = idx + at.ybase;
    typename P::E *dxp = dx + at.xbase;
    for (int h = max(hs, 0); h < h1; h++) {
      bool hcov = h < hs + g.kernel_h;
      int ph0 = hcov ? cover_low(h, ph, g.kernel_h, g.stride_h, g.pad_h) : ph + 1;
      for (int w = max(ws, 0); w < w1; w++) {
        float grad[8] = {0, 0, 0, 0, 0, 0, 0, 0}, d[8];
        if (hcov && w < ws + g.kernel_w) {
          int pw0 = cover_low(w, pw, g.kernel_w, g.stride_w, g.pad_w);
          for (int oh = ph0; oh <= ph; oh++) {
            int row = (h - oh * g.stride_h + g.pad_h) * g.kernel_w + w + g.pad_w;
            for (int ow = pw0; ow <= pw; ow++) {
              long long o = (long long)(oh * g.pooled_w + ow) * g.channels;
              unsigned long long id = *(const unsigned long long *)(ip + o);
              unpack8<P>(*(const uint4 *)(dyp + o), d);
              unsigned want = (unsigned)(row - ow * g.stride_w);
#pragma unroll
              for (int k = 0; k < 8; k++) {
                if (((id >> (8 * k)) & 255) == want) grad[k] += d[k];
              }
            }
          }
        }
        *(uint4 *)(dxp + (long long)(h * g.width + w) * g.channels) = pack8<P>(grad);
      }
    }
  }
}

#define POOL_OFFSETS_CL8(P, S)                                                                              \
  extern "C" __global__ void max_pool_forward_offsets_cl8_##S(int n, const P::E *x, PoolGeom g, P::E *y,   \
                                                             unsigned char *off) {                          \
    max_pool_forward_offsets_cl8<P>(n, x, g, y, off);                                                       \
  }                                                                                                         \
  extern "C" __global__ void offset_pool_tiles_cl8_##S(int n, const P::E *dy, const unsigned char *off,     \
                                                       PoolGeom g, P::E *dx) {                              \
    offset_pool_tiles_cl8<P>(n, dy, off, g, dx);                                                            \
  }
HALF_STORAGES(POOL_OFFSETS_CL8)

// The offsets' kernels, and their channels-last twins (_cl).
#define POOL_OFFSETS_ORDER(P, S, CL, O)                                                                     \
  extern "C" __global__ void max_pool_forward_offsets##O##_##S(int n, const P::E *x, PoolGeom g, P::E *y,  \
                                                              unsigned char *off) {                         \
    max_pool_forward_offsets<P, CL>(n, x, g, y, off);                                                       \
  }                                                                                                         \
  extern "C" __global__ void offset_pool_backward##O##_##S(int n, const P::E *dy, const unsigned char *off, \
                                                           PoolGeom g, P::E *dx) {                          \
    offset_pool_backward<P, CL>(n, dy, off, g, dx);                                                         \
  }                                                                                                         \
  extern "C" __global__ void offset_pool_tiles##O##_##S(int n, const P::E *dy, const unsigned char *off,    \
                                                        PoolGeom g, P::E *dx) {                             \
    offset_pool_tiles<P, CL>(n, dy, off, g, dx);                                                            \
  }
#define POOL_OFFSETS(P, S)               \
  POOL_OFFSETS_ORDER(P, S, false, )      \
  POOL_OFFSETS_ORDER(P, S, true, _cl)
ALL_STORAGES(POOL_OFFSETS)
