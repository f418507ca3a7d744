// Depthwise convolution (one filter per channel, group == channels ==
// outputs) over NCHW planes, the cuDNN engine's other way for it
// (convolution_depthwise_gpu.go): cuDNN's grouped algorithms are slow on
// these memory-bound shapes, in 16 bits most of all. Each kernel is
// instantiated for every storage of x, y, w and their gradients (common.cuh's
// policies); sums are in float (or double), and the weight gradient is
// added to the T (FP32 or FP64) diff.

// The geometry, packed by the Go side in this field order.
struct DWGeom {
  int channels, height, width, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};

// The most taps (kernel_h * kernel_w) the weight gradient's kernel keeps in
// registers; the Go side takes this way only up to it.
#define DW_MAX_TAPS 25
// Threads per block of the weight gradient's kernel.
#define DW_THREADS 256

// The forward and bottom gradient kernels' index arithmetic is 32-bit (n
// is an int): KERNEL_LOOP's 64-bit index made each thread divide three
// times in 64 bits, and the bottom gradient divided by the stride at
// every tap. On MobileNet v1 at batch 64 in BFLOAT16 (H100, 2026-11-28)
// the forward passes took 10-25% less time so. The weight gradient's
// kernel keeps its divisions: working each tap's place out once, in 50
// more registers, made the largest layers' backward passes 10% slower.

// dw_div sets *q to t / s (t >= 0) and reports whether s divides t:
// strides 1 and 2 without a division.
__device__ __forceinline__ bool dw_div(int t, int s, int *q) {
  if (s == 1) {
    *q = t;
    return true;
  }
  if (s == 2) {
    *q = t >> 1;
    return (t & 1) == 0;
  }
  *q = t / s;
  return t - *q * s == 0;
}

// Forward: one thread per output element.
template <class P>
__device__ void dw_forward(int n, const typename P::E *x, const typename P::E *w, DWGeom g,
                           typename P::E *y) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.out_w, ow = j - q * g.out_w;
    int plane = q / g.out_h, oh = q - plane * g.out_h;  // plane: image * channels + channel
    int c = plane % g.channels;
    const typename P::E *xp = x + (long long)plane * g.height * g.width;
    const typename P::E *wp = w + c * g.kernel_h * g.kernel_w;
    int h0 = oh * g.stride_h - g.pad_h, v0 = ow * g.stride_w - g.pad_w;
    T sum = 0;
    for (int a = 0; a < g.kernel_h; a++) {
      int h = h0 + a * g.dil_h;
      if (h < 0 || h >= g.height) continue;
      for (int b = 0; b < g.kernel_w; b++) {
        int v = v0 + b * g.dil_w;
        if (v < 0 || v >= g.width) continue;
        sum += P::ld(wp[a * g.kernel_w + b]) * P::ld(xp[h * g.width + v]);
      }
    }
    y[i] = P::st(sum);
  }
}

// Bottom gradient: one thread per bottom element, gathering from the
// outputs whose windows read it (no atomics).
template <class P>
__device__ void dw_backward_data(int n, const typename P::E *dy, const typename P::E *w, DWGeom g,
                                 typename P::E *dx) {
  typedef typename P::T T;
  KERNEL_LOOP(i, n) {
    int j = (int)i, q = j / g.width, v = j - q * g.width;
    int plane = q / g.height, h = q - plane * g.height;
    int c = plane % g.channels;
    const typename P::E *dyp = dy + (long long)plane * g.out_h * g.out_w;
    const typename P::E *wp = w + c * g.kernel_h * g.kernel_w;
    T sum = 0;
    for (int a = 0; a < g.kernel_h; a++) {
      int t = h + g.pad_h - a * g.dil_h, oh;  // oh * stride_h
      if (t < 0 || !dw_div(t, g.stride_h, &oh) || oh >= g.out_h) continue;
      for (int b = 0; b < g.kernel_w; b++) {
        int u = v + g.pad_w - b * g.dil_w, ow;
        if (u < 0 || !dw_div(u, g.stride_w, &ow) || ow >= g.out_w) continue;
        sum += P::ld(wp[a * g.kernel_w + b]) * P::ld(dyp[oh * g.out_w + ow]);
      }
    }
    dx[i] = P::st(sum);
  }
}

// Weight gradient: block (c, part) sums, for every tap of channel c,
// dy * x over its part of the images' output pixels, each thread keeping a
// sum per tap; the block adds its sums to dw with atomics when the
// channel is cut into several parts (parts > 1), plainly when not.
template <class P>
__device__ void dw_backward_filter(int num, const typename P::E *x, const typename P::E *dy,
                                   DWGeom g, int parts, typename P::T *dw) {
  typedef typename P::T T;
  __shared__ T red[DW_THREADS];
  int c = blockIdx.x, part = blockIdx.y;
  int taps = g.kernel_h * g.kernel_w;
  long long pixels = (long long)g.out_h * g.out_w, total = num * pixels;
  long long per = (total + parts - 1) / parts;
  long long begin = part * per, end = min(total, begin + per);
  T acc[DW_MAX_TAPS];
#pragma unroll
  for (int t = 0; t < DW_MAX_TAPS; t++) acc[t] = 0;
  for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) {
    long long img = k / pixels;
    int o = (int)(k - img * pixels), oh = o / g.out_w, ow = o - oh * g.out_w;
    long long plane = img * g.channels + c;
    T d = P::ld(dy[plane * pixels + o]);
    const typename P::E *xp = x + plane * g.height * g.width;
    // Fully unrolled with constant indices, so that acc stays in registers.
#pragma unroll
    for (int t = 0; t < DW_MAX_TAPS; t++) {
      if (t < taps) {
        int a = t / g.kernel_w, b = t - a * g.kernel_w;
        int h = oh * g.stride_h - g.pad_h + a * g.dil_h, v = ow * g.stride_w - g.pad_w + b * g.dil_w;
        if (h >= 0 && h < g.height && v >= 0 && v < g.width) acc[t] += d * P::ld(xp[h * g.width + v]);
      }
    }
  }
  // taps is the same for every thread of the block, so the barriers
  // inside the test are reached by all.
#pragma unroll
  for (int t = 0; t < DW_MAX_TAPS; t++) {
    if (t < taps) {
      red[threadIdx.x] = acc[t];
      __syncthreads();
      for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
      }
      if (threadIdx.x == 0) {
        T *p = dw + (long long)c * taps + t;
        if (parts > 1) {
          atomicAdd(p, red[0]);
        } else {
          *p += red[0];
        }
      }
      __syncthreads();
    }
  }
}

#define DEPTHWISE(P, S)                                                                           \
  extern "C" __global__ void dw_forward_##S(int n, const P::E *x, const P::E *w, DWGeom g,       \
                                            P::E *y) {                                           \
    dw_forward<P>(n, x, w, g, y);                                                                \
  }                                                                                              \
  extern "C" __global__ void dw_backward_data_##S(int n, const P::E *dy, const P::E *w, DWGeom g, \
                                                  P::E *dx) {                                    \
    dw_backward_data<P>(n, dy, w, g, dx);                                                        \
  }                                                                                              \
  extern "C" __global__ void dw_backward_filter_##S(int num, const P::E *x, const P::E *dy,      \
                                                    DWGeom g, int parts, P::T *dw) {             \
    dw_backward_filter<P>(num, x, dy, g, parts, dw);                                             \
  }
ALL_STORAGES(DEPTHWISE)

// Channels-last twins (_cl8) for 16-bit blobs of a multiple of 8
// channels: a thread takes 8 consecutive channels of one position, moved
// in one 16-byte load or store (common.cuh's unpack8 and pack8), and a
// warp reads whole positions, where the row-major kernels' plane order
// would have a thread read with a stride of the channels. The weights are
// read tap-major (dw_taps_first), so that a tap's 8 weights are one load
// too. The forward and bottom gradient kernels sum in the row-major
// kernels' order: the same bits.

// dw_taps_first: wt[t][c] = w[c][t], the weights with the taps outermost.
template <typename E>
__device__ void dw_taps_first(int n, const E *w, int channels, int taps, E *wt) {
  KERNEL_LOOP(i, n) {
    int t = (int)i / channels, c = (int)i - t * channels;
    wt[i] = w[c * taps + t];
  }
}

// Forward: thread j computes channels 8*(j % (channels/8)) and up of
// output position j / (channels/8).
template <class P>
__device__ void dw_forward_cl8(int n8, const typename P::E *x, const typename P::E *wt, DWGeom g,
                               typename P::E *y) {
  int c8 = g.channels >> 3;
  KERNEL_LOOP(i, n8) {
    int j = (int)i, q = j / c8, k = (j - q * c8) * 8;  // q: (image, oh, ow)
    int r = q / g.out_w, ow = q - r * g.out_w;
    int img = r / g.out_h, oh = r - img * g.out_h;
    const typename P::E *xp = x + (long long)img * g.height * g.width * g.channels + k;
    int h0 = oh * g.stride_h - g.pad_h, v0 = ow * g.stride_w - g.pad_w;
    float sum[8], xv[8], wv[8];
#pragma unroll
    for (int e = 0; e < 8; e++) sum[e] = 0;
    for (int a = 0; a < g.kernel_h; a++) {
      int h = h0 + a * g.dil_h;
      if (h < 0 || h >= g.height) continue;
      for (int b = 0; b < g.kernel_w; b++) {
        int v = v0 + b * g.dil_w;
        if (v < 0 || v >= g.width) continue;
        unpack8<P>(*(const uint4 *)(xp + (long long)(h * g.width + v) * g.channels), xv);
        unpack8<P>(*(const uint4 *)(wt + (a * g.kernel_w + b) * g.channels + k), wv);
#pragma unroll
        for (int e = 0; e < 8; e++) sum[e] += wv[e] * xv[e];
      }
    }
    *(uint4 *)(y + (long long)q * g.channels + k) = pack8<P>(sum);
  }
}

// Bottom gradient: thread j gathers channels 8*(j % (channels/8)) and up
// of bottom position j / (channels/8) from the outputs whose windows read
// it.
template <class P>
__device__ void dw_backward_data_cl8(int n8, const typename P::E *dy, const typename P::E *wt, DWGeom g,
                                     typename P::E *dx) {
  int c8 = g.channels >> 3;
  KERNEL_LOOP(i, n8) {
    int j = (int)i, q = j / c8, k = (j - q * c8) * 8;  // q: (image, h, v)
    int r = q / g.width, v = q - r * g.width;
    int img = r / g.height, h = r - img * g.height;
    const typename P::E *dyp = dy + (long long)img * g.out_h * g.out_w * g.channels + k;
    float sum[8], dv[8], wv[8];
#pragma unroll
    for (int e = 0; e < 8; e++) sum[e] = 0;
    for (int a = 0; a < g.kernel_h; a++) {
      int t = h + g.pad_h - a * g.dil_h, oh;  // oh * stride_h
      if (t < 0 || !dw_div(t, g.stride_h, &oh) || oh >= g.out_h) continue;
      for (int b = 0; b < g.kernel_w; b++) {
        int u = v + g.pad_w - b * g.dil_w, ow;
        if (u < 0 || !dw_div(u, g.stride_w, &ow) || ow >= g.out_w) continue;
        unpack8<P>(*(const uint4 *)(dyp + (long long)(oh * g.out_w + ow) * g.channels), dv);
        unpack8<P>(*(const uint4 *)(wt + (a * g.kernel_w + b) * g.channels + k), wv);
#pragma unroll
        for (int e = 0; e < 8; e++) sum[e] += wv[e] * dv[e];
      }
    }
    *(uint4 *)(dx + (long long)q * g.channels + k) = pack8<P>(sum);
  }
}

// The most taps the channels-last weight gradient keeps in registers (8
// sums each): MobileNet's 3x3.
#define DW_CL_MAX_TAPS 9

// Weight gradient: a block of DW_THREADS threads takes tile groups of 8
// channels (lane = thread % tile, tile a power of two) over its part of
// the output positions, DW_THREADS / tile positions at a time (row =
// thread / tile), each thread summing dy * x for every tap of its 8
// channels; the rows' sums are then added up in shared memory, tap by tap,
// and added to dw (Caffe's order, channel by channel) with atomics where
// the positions are cut into several parts.
template <class P>
__device__ void dw_backward_filter_cl8(int num, const typename P::E *x, const typename P::E *dy, DWGeom g,
                                       int tile, int parts, float *dw) {
  __shared__ float red[8 * DW_THREADS];  // value e of thread i at e*DW_THREADS + i: no bank conflicts
  int c8 = g.channels >> 3, taps = g.kernel_h * g.kernel_w;
  int lane = threadIdx.x % tile, row = threadIdx.x / tile, rows = blockDim.x / tile;
  int grp = blockIdx.x * tile + lane, k = grp * 8;
  long long pixels = (long long)g.out_h * g.out_w, total = num * pixels;
  long long per = (total + parts - 1) / parts;
  long long begin = blockIdx.y * per, end = min(total, begin + per);
  float acc[DW_CL_MAX_TAPS][8];
#pragma unroll
  for (int t = 0; t < DW_CL_MAX_TAPS; t++) {
#pragma unroll
    for (int e = 0; e < 8; e++) acc[t][e] = 0;
  }
  if (grp < c8) {
    for (long long p = begin + row; p < end; p += rows) {
      int img = (int)(p / pixels), o = (int)(p - img * pixels), oh = o / g.out_w, ow = o - oh * g.out_w;
      float d[8], xv[8];
      unpack8<P>(*(const uint4 *)(dy + p * g.channels + k), d);
      const typename P::E *xp = x + (long long)img * g.height * g.width * g.channels + k;
      int h0 = oh * g.stride_h - g.pad_h, v0 = ow * g.stride_w - g.pad_w;
      // Fully unrolled with constant indices, so that acc stays in registers.
#pragma unroll
      for (int t = 0; t < DW_CL_MAX_TAPS; t++) {
        if (t < taps) {
          int a = t / g.kernel_w, b = t - a * g.kernel_w;
          int h = h0 + a * g.dil_h, v = v0 + b * g.dil_w;
          if (h >= 0 && h < g.height && v >= 0 && v < g.width) {
            unpack8<P>(*(const uint4 *)(xp + (long long)(h * g.width + v) * g.channels), xv);
#pragma unroll
            for (int e = 0; e < 8; e++) acc[t][e] += d[e] * xv[e];
          }
        }
      }
    }
  }
  // taps is the same for every thread, so the barriers inside the test
  // are reached by all.
#pragma unroll
  for (int t = 0; t < DW_CL_MAX_TAPS; t++) {
    if (t < taps) {
#pragma unroll
      for (int e = 0; e < 8; e++) red[e * DW_THREADS + threadIdx.x] = acc[t][e];
      __syncthreads();
      for (int s = rows / 2; s > 0; s /= 2) {
        if (row < s) {
#pragma unroll
          for (int e = 0; e < 8; e++) red[e * DW_THREADS + threadIdx.x] += red[e * DW_THREADS + threadIdx.x + s * tile];
        }
        __syncthreads();
      }
      if (row == 0 && grp < c8) {
#pragma unroll
        for (int e = 0; e < 8; e++) {
          float *q = dw + (long long)(k + e) * taps + t;
          if (parts > 1) {
            atomicAdd(q, red[e * DW_THREADS + threadIdx.x]);
          } else {
            *q += red[e * DW_THREADS + threadIdx.x];
          }
        }
      }
      __syncthreads();
    }
  }
}

#define DEPTHWISE_CL8(P, S)                                                                          \
  extern "C" __global__ void dw_forward_cl8_##S(int n8, const P::E *x, const P::E *wt, DWGeom g,      \
                                                P::E *y) {                                            \
    dw_forward_cl8<P>(n8, x, wt, g, y);                                                               \
  }                                                                                                   \
  extern "C" __global__ void dw_backward_data_cl8_##S(int n8, const P::E *dy, const P::E *wt,         \
                                                      DWGeom g, P::E *dx) {                           \
    dw_backward_data_cl8<P>(n8, dy, wt, g, dx);                                                       \
  }                                                                                                   \
  extern "C" __global__ void dw_backward_filter_cl8_##S(int num, const P::E *x, const P::E *dy,      \
                                                        DWGeom g, int tile, int parts, float *dw) {   \
    dw_backward_filter_cl8<P>(num, x, dy, g, tile, parts, dw);                                        \
  }
HALF_STORAGES(DEPTHWISE_CL8)

extern "C" __global__ void dw_taps_first_h16_f32(int n, const half16 *w, int channels, int taps, half16 *wt) {
  dw_taps_first<half16>(n, w, channels, taps, wt);
}
