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
