// Local response normalization, one thread per element. Each thread sums
// its own window directly (channels for ACROSS_CHANNELS, a square of its
// plane for WITHIN_CHANNEL), in the order the CPU half uses.

struct LRNGeom {
  int within, half, channels, height, width;
};

// The window of element i: [a0, a1] along the channels, or rows [a0, a1]
// and columns [b0, b1] of its plane; base is the offset of channel 0 (or
// row 0, column 0) and step the stride along the channels.
struct LRNWindow {
  long long base;
  int step, a0, a1, b0, b1;
};

__device__ LRNWindow lrn_window(const LRNGeom &g, long long i) {
  LRNWindow r;
  int plane = g.height * g.width;
  if (!g.within) {
    int c = (int)(i / plane % g.channels);
    r.base = i - (long long)c * plane;
    r.step = plane;
    r.a0 = max(c - g.half, 0);
    r.a1 = min(c + g.half, g.channels - 1);
    r.b0 = r.b1 = 0;
  } else {
    int w = (int)(i % g.width), h = (int)(i / g.width % g.height);
    r.base = i - (long long)h * g.width - w;
    r.step = g.width;
    r.a0 = max(h - g.half, 0);
    r.a1 = min(h + g.half, g.height - 1);
    r.b0 = max(w - g.half, 0);
    r.b1 = min(w + g.half, g.width - 1);
  }
  return r;
}

// scale = constant + sum_factor * (the window's sum of x^2); y = x * scale^-beta.
template <typename T>
__device__ void lrn_forward(int n, const T *x, LRNGeom g, T sum_factor, T constant, T beta, T *scale, T *y) {
  KERNEL_LOOP(i, n) {
    LRNWindow win = lrn_window(g, i);
    T sum = 0;
    for (int a = win.a0; a <= win.a1; a++) {
      for (int b = win.b0; b <= win.b1; b++) {
        T v = x[win.base + (long long)a * win.step + b];
        sum += v * v;
      }
    }
    T s = constant + sum_factor * sum;
    scale[i] = s;
    y[i] = x[i] * pow(s, -beta);
  }
}

// dx = dy * scale^-beta - back_factor * x * (the window's sum of dy * y / scale).
template <typename T>
__device__ void lrn_backward(int n, const T *x, const T *y, const T *dy, const T *scale, LRNGeom g,
                             T back_factor, T beta, T *dx) {
  KERNEL_LOOP(i, n) {
    LRNWindow win = lrn_window(g, i);
    T acc = 0;
    for (int a = win.a0; a <= win.a1; a++) {
      for (int b = win.b0; b <= win.b1; b++) {
        long long j = win.base + (long long)a * win.step + b;
        acc += dy[j] * y[j] / scale[j];
      }
    }
    dx[i] = dy[i] * pow(scale[i], -beta) - back_factor * x[i] * acc;
  }
}

#define LRN(T, S)                                                                                     \
  extern "C" __global__ void lrn_forward_##S(int n, const T *x, LRNGeom g, T sum_factor, T constant,  \
                                             T beta, T *scale, T *y) {                                \
    lrn_forward<T>(n, x, g, sum_factor, constant, beta, scale, y);                                    \
  }                                                                                                   \
  extern "C" __global__ void lrn_backward_##S(int n, const T *x, const T *y, const T *dy,             \
                                              const T *scale, LRNGeom g, T back_factor, T beta,       \
                                              T *dx) {                                                \
    lrn_backward<T>(n, x, y, dy, scale, g, back_factor, beta, dx);                                    \
  }
BOTH_TYPES(LRN)

// ACROSS_CHANNELS LRN on 16-bit activations (the LRN engine in a 16-bit
// type), computing in float. One thread per pixel of an image walks its
// channels with running sums of x^2, so each value is read a few times
// from cache instead of once per window it lies in, and no scale is
// stored: the backward pass computes the scales again from x.
//
// W(c) = [c - half, c + half] and s(c) = constant + sum_factor * the sum
// of x^2 over W(c); y(c) = x(c) * s(c)^-beta and
// dx(c) = dy(c) * s(c)^-beta - back_factor * x(c) * the sum over W(c) of
// r(j) = dy(j) * x(j) * s(j)^(-beta-1), which is dy * y / scale.
template <class P>
struct LRNColumn {
  const typename P::E *x;
  long long plane;
  int channels;
  // sq is x(c)^2, or 0 outside the image's channels.
  __device__ __forceinline__ float sq(int c) const {
    if (c < 0 || c >= channels) return 0.f;
    float v = P::ld(x[c * plane]);
    return v * v;
  }
};

template <class P>
__device__ void lrn_walk_forward(int pixels, int channels, int plane, int half, float sum_factor,
                                 float constant, float beta, const typename P::E *x, typename P::E *y) {
  KERNEL_LOOP(p, pixels) {
    long long base = (p / plane) * (long long)channels * plane + p % plane;
    LRNColumn<P> col{x + base, plane, channels};
    float sum = 0.f;  // over W(-1)
    for (int c = 0; c < half; c++) sum += col.sq(c);
    for (int c = 0; c < channels; c++) {
      sum += col.sq(c + half) - col.sq(c - half - 1);
      float s = constant + sum_factor * fmaxf(sum, 0.f);
      long long i = base + c * (long long)plane;
      y[i] = P::st(P::ld(x[i]) * powf(s, -beta));
    }
  }
}

template <class P>
__device__ void lrn_walk_backward(int pixels, int channels, int plane, int half, float sum_factor,
                                  float constant, float back_factor, float beta,
                                  const typename P::E *x, const typename P::E *dy,
                                  typename P::E *dx) {
  KERNEL_LOOP(p, pixels) {
    long long base = (p / plane) * (long long)channels * plane + p % plane;
    LRNColumn<P> col{x + base, plane, channels};
    const typename P::E *g = dy + base;
    // r(j) for j inside the image, from the running sum over W(j).
    auto ratio = [&](int j, float sum) {
      if (j < 0 || j >= channels) return 0.f;
      float s = constant + sum_factor * fmaxf(sum, 0.f);
      return P::ld(g[j * (long long)plane]) * P::ld(col.x[j * col.plane]) * powf(s, -beta - 1.f);
    };
    // Three windows slide together, all empty at c = -2*half - 1: W(c+half)
    // where r enters the sum, W(c-half-1) where it leaves, and W(c).
    float lead = 0.f, trail = 0.f, mid = 0.f, rsum = 0.f;
    for (int c = -2 * half; c < channels; c++) {
      lead += col.sq(c + 2 * half) - col.sq(c - 1);
      trail += col.sq(c - 1) - col.sq(c - 2 * half - 2);
      mid += col.sq(c + half) - col.sq(c - half - 1);
      rsum += ratio(c + half, lead) - ratio(c - half - 1, trail);
      if (c < 0) continue;
      float s = constant + sum_factor * fmaxf(mid, 0.f);
      long long i = base + c * (long long)plane;
      dx[i] = P::st(P::ld(dy[i]) * powf(s, -beta) - back_factor * P::ld(x[i]) * rsum);
    }
  }
}

#define LRN_WALK(P, S)                                                                          \
  extern "C" __global__ void lrn_walk_forward_##S(int pixels, int channels, int plane, int half, \
                                                  float sum_factor, float constant, float beta,  \
                                                  const P::E *x, P::E *y) {                      \
    lrn_walk_forward<P>(pixels, channels, plane, half, sum_factor, constant, beta, x, y);        \
  }                                                                                             \
  extern "C" __global__ void lrn_walk_backward_##S(                                             \
      int pixels, int channels, int plane, int half, float sum_factor, float constant,          \
      float back_factor, float beta, const P::E *x, const P::E *dy, P::E *dx) {                 \
    lrn_walk_backward<P>(pixels, channels, plane, half, sum_factor, constant, back_factor, beta, \
                         x, dy, dx);                                                            \
  }
HALF_STORAGES(LRN_WALK)

// The same LRN on channels-last 16-bit activations (kit.Reduced's order:
// a pixel's channels are consecutive), one thread per element: a warp
// reads consecutive channels of a pixel, and each thread sums its windows
// directly from cache. The walks above, one thread per pixel, read there
// with a stride of the channels between the threads of a warp: CaffeNet's
// norm1 took 0.50 ms forward and 2.05 backward so, against 0.12 and 0.29
// row-major. Sums here are taken window by window, not running, so they
// round a little differently from the walks'.
template <class P>
__device__ __forceinline__ float lrn_cl_scale(const typename P::E *col, int c, int channels, int half,
                                              float sum_factor, float constant) {
  float sum = 0.f;
  for (int k = max(c - half, 0); k <= min(c + half, channels - 1); k++) {
    float v = P::ld(col[k]);
    sum += v * v;
  }
  return constant + sum_factor * sum;
}

template <class P>
__device__ void lrn_cl_forward(int n, int channels, int half, float sum_factor, float constant, float beta,
                               const typename P::E *x, typename P::E *y) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, p = j / channels, c = j - p * channels;
    float s = lrn_cl_scale<P>(x + (long long)p * channels, c, channels, half, sum_factor, constant);
    y[i] = P::st(P::ld(x[i]) * powf(s, -beta));
  }
}

template <class P>
__device__ void lrn_cl_backward(int n, int channels, int half, float sum_factor, float constant,
                                float back_factor, float beta, const typename P::E *x,
                                const typename P::E *dy, typename P::E *dx) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, p = j / channels, c = j - p * channels;
    const typename P::E *col = x + (long long)p * channels, *g = dy + (long long)p * channels;
    float here = 0.f, rsum = 0.f;  // s(c), and the sum of r over W(c)
    for (int k = max(c - half, 0); k <= min(c + half, channels - 1); k++) {
      float s = lrn_cl_scale<P>(col, k, channels, half, sum_factor, constant);
      if (k == c) here = s;
      rsum += P::ld(g[k]) * P::ld(col[k]) * powf(s, -beta - 1.f);
    }
    dx[i] = P::st(P::ld(dy[i]) * powf(here, -beta) - back_factor * P::ld(x[i]) * rsum);
  }
}

#define LRN_CL(P, S)                                                                                   \
  extern "C" __global__ void lrn_cl_forward_##S(int n, int channels, int half, float sum_factor,      \
                                                float constant, float beta, const P::E *x, P::E *y) { \
    lrn_cl_forward<P>(n, channels, half, sum_factor, constant, beta, x, y);                            \
  }                                                                                                    \
  extern "C" __global__ void lrn_cl_backward_##S(int n, int channels, int half, float sum_factor,     \
                                                 float constant, float back_factor, float beta,        \
                                                 const P::E *x, const P::E *dy, P::E *dx) {            \
    lrn_cl_backward<P>(n, channels, half, sum_factor, constant, back_factor, beta, x, dy, dx);         \
  }
HALF_STORAGES(LRN_CL)

// The channels-last bottom gradient on 8 channels a thread (_cl8), for
// channels in eights and windows of at most 9 (H = half of the window, 1
// to 4): the scales of the 8 + 2H channels whose windows reach the
// thread's 8, and their powers, are taken once each and shared, where
// lrn_cl_backward takes 2H + 1 of them for every value: CaffeNet's norm1
// took 0.61 ms backward so on the H100, twice the row-major walk's 0.29.
// The sums and products are lrn_cl_backward's, in its order.
template <class P, int H>
__device__ void lrn_cl8_backward(int n8, int channels, float sum_factor, float constant, float back_factor,
                                 float beta, const typename P::E *x, const typename P::E *dy,
                                 typename P::E *dx) {
  const int NX = 8 + 4 * H, NS = 8 + 2 * H;  // x from c0 - 2H, scales from c0 - H
  int c8 = channels >> 3;
  KERNEL_LOOP(i, n8) {
    int j = (int)i, p = j / c8, c0 = (j - p * c8) * 8;
    const typename P::E *col = x + (long long)p * channels, *g = dy + (long long)p * channels;
    float xv[NX], sq[NX];
#pragma unroll
    for (int m = 0; m < NX; m++) {
      int c = c0 - 2 * H + m;
      xv[m] = c >= 0 && c < channels ? P::ld(col[c]) : 0.f;
      sq[m] = xv[m] * xv[m];
    }
    float r[NS], here[8];
#pragma unroll
    for (int q = 0; q < NS; q++) {
      int k = c0 - H + q;
      float sum = 0.f;
#pragma unroll
      for (int m = q; m <= q + 2 * H; m++) {
        int c = c0 - 2 * H + m;
        if (c >= 0 && c < channels) sum += sq[m];
      }
      float s = constant + sum_factor * sum;
      r[q] = k >= 0 && k < channels ? P::ld(g[k]) * xv[q + H] * powf(s, -beta - 1.f) : 0.f;
      if (q >= H && q < H + 8) here[q - H] = s;
    }
    float out[8];
#pragma unroll
    for (int e = 0; e < 8; e++) {
      float rsum = 0.f;
#pragma unroll
      for (int q = e; q <= e + 2 * H; q++) {
        int k = c0 - H + q;
        if (k >= 0 && k < channels) rsum += r[q];
      }
      out[e] = P::ld(g[c0 + e]) * powf(here[e], -beta) - back_factor * xv[e + 2 * H] * rsum;
    }
    *(uint4 *)(dx + (long long)p * channels + c0) = pack8<P>(out);
  }
}

#define LRN_CL8_H(P, S, H)                                                                             \
  extern "C" __global__ void lrn_cl8_backward_h##H##_##S(int n8, int channels, float sum_factor,        \
                                                         float constant, float back_factor, float beta, \
                                                         const P::E *x, const P::E *dy, P::E *dx) {     \
    lrn_cl8_backward<P, H>(n8, channels, sum_factor, constant, back_factor, beta, x, dy, dx);           \
  }
#define LRN_CL8(P, S) LRN_CL8_H(P, S, 1) LRN_CL8_H(P, S, 2) LRN_CL8_H(P, S, 3) LRN_CL8_H(P, S, 4)
HALF_STORAGES(LRN_CL8)
