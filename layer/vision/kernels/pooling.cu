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
template <typename P>
__device__ void max_pool_forward_offsets(int n, const typename P::E *x, PoolGeom g, typename P::E *y,
                                         unsigned char *off) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    const typename P::E *xp = x + plane * g.height * g.width;
    PoolWindow win = pool_window(g, ph, pw);
    int hs = ph * g.stride_h - g.pad_h, ws = pw * g.stride_w - g.pad_w;
    T best = T(-3.40282346638528859811704183484516925440e+38);
    int arg = 255;
    for (int h = win.h0; h < win.h1; h++) {
      for (int w = win.w0; w < win.w1; w++) {
        T v = P::ld(xp[h * g.width + w]);
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
template <typename P>
__device__ void offset_pool_backward(int n, const typename P::E *dy, const unsigned char *idx, PoolGeom g,
                                     typename P::E *dx) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.width;
    int w = j - q * g.width, h = q % g.height;
    long long plane = q / g.height;
    int ph0, ph1, pw0, pw1;
    pool_cover(h, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h, &ph0, &ph1);
    pool_cover(w, g.kernel_w, g.stride_w, g.pad_w, g.pooled_w, &pw0, &pw1);
    long long off = plane * g.pooled_h * g.pooled_w;
    T grad = 0;
    for (int ph = ph0; ph < ph1; ph++) {
      int row = (h - ph * g.stride_h + g.pad_h) * g.kernel_w + w + g.pad_w;
      for (int pw = pw0; pw < pw1; pw++) {
        long long o = off + ph * g.pooled_w + pw;
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
template <typename P>
__device__ void offset_pool_tiles(int n, const typename P::E *dy, const unsigned char *idx, PoolGeom g,
                                  typename P::E *dx) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.pooled_w;
    int pw = j - q * g.pooled_w, ph = q % g.pooled_h;
    long long plane = q / g.pooled_h;
    int hs = ph * g.stride_h - g.pad_h, ws = pw * g.stride_w - g.pad_w;
    int h1 = ph == g.pooled_h - 1 ? g.height : min(hs + g.stride_h, g.height);
    int w1 = pw == g.pooled_w - 1 ? g.width : min(ws + g.stride_w, g.width);
    const typename P::E *dyp = dy + plane * g.pooled_h * g.pooled_w;
    const unsigned char *ip = idx + plane * g.pooled_h * g.pooled_w;
    typename P::E *dxp = dx + plane * g.height * g.width;
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
              int o = oh * g.pooled_w + ow;
              if (ip[o] == row - ow * g.stride_w) grad += P::ld(dyp[o]);
            }
          }
        }
        dxp[h * g.width + w] = P::st(grad);
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

#define POOL_OFFSETS(P, S)                                                                            \
  extern "C" __global__ void max_pool_forward_offsets_##S(int n, const P::E *x, PoolGeom g, P::E *y, \
                                                         unsigned char *off) {                        \
    max_pool_forward_offsets<P>(n, x, g, y, off);                                                     \
  }                                                                                                   \
  extern "C" __global__ void offset_pool_backward_##S(int n, const P::E *dy, const unsigned char *off, \
                                                      PoolGeom g, P::E *dx) {                         \
    offset_pool_backward<P>(n, dy, off, g, dx);                                                       \
  }                                                                                                   \
  extern "C" __global__ void offset_pool_tiles_##S(int n, const P::E *dy, const unsigned char *off,  \
                                                   PoolGeom g, P::E *dx) {                            \
    offset_pool_tiles<P>(n, dy, off, g, dx);                                                          \
  }
ALL_STORAGES(POOL_OFFSETS)
