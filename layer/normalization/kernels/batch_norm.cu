// BatchNorm's running sums after a training pass on cuDNN, in one launch
// instead of six (scal, add_scalar and two axpby, each a scal and an
// axpy): s = maf*s + 1, mean = maf*mean + batch mean, var = maf*var +
// batch variance, rounded as those operations round (the products, then
// the sums; no fused multiply-add).

#define BN_RUNNING(T, S, MUL, ADD)                                                         \
  extern "C" __global__ void bn_running_sums_##S(int c, T maf, const T *mean,             \
                                                 const T *var, T *s, T *rmean, T *rvar) { \
    KERNEL_LOOP(i, c) {                                                                    \
      rmean[i] = ADD(MUL(maf, rmean[i]), mean[i]);                                         \
      rvar[i] = ADD(MUL(maf, rvar[i]), var[i]);                                            \
      if (i == 0) s[0] = ADD(MUL(maf, s[0]), T(1));                                        \
    }                                                                                      \
  }
BN_RUNNING(float, f32, __fmul_rn, __fadd_rn)
BN_RUNNING(double, f64, __dmul_rn, __dadd_rn)

// BatchNorm's passes on gocaffe's own kernels (the default on the cuDNN
// engine; cuDNN's batch normalization reads and writes several times more
// than it needs to). The data is num x c x s; row r = n*c + ch holds the s
// values of image n in channel ch, contiguous. One warp takes one row, so
// a row's values are read with 16-byte loads where the row allows and the
// per-channel values are read once per row, not once per element.
//
// Training, forward: bn_row_stats (each row's mean and sum of squared
// deviations, by Welford's update per lane and Chan's merge across
// lanes: one read, no cancellation), bn_channel_stats (rows merged per
// channel; the saved mean and 1/std; Caffe's running sums),
// bn_apply (y = (x - mean) * gamma/std + beta). Backward:
// bn_row_grad_sums (per row, sum dy and sum dy * (x - mean)),
// bn_channel_grad (the affine part's gradients, added where asked, and
// dx = A*dy + B*(x - mean) + C per channel), bn_grad_apply. With global
// statistics: bn_global_stats replaces the first two.
//
// A ReLU in place after the layer (and its Scale) may be computed too
// (relu not 0): forward applies it to z = (x - mean) * a + b, and backward
// recomputes z from x, which it reads anyway, to mask dy as Caffe's ReLU
// does from its output (z > 0 exactly where the output is, for slope >= 0).

#define BN_THREADS 256
#define BN_FULL_MASK 0xffffffffu

// BnPack is 16 bytes of P::E, unpacked to and packed from P::T: 8 values
// of a 16-bit storage, 4 floats, 2 doubles.
template <typename P> struct BnPack {
  typedef uint4 V;
  static const int W = 8;
  __device__ static void get(const V &v, float *o) {
    const half16 *h = (const half16 *)&v;
#pragma unroll
    for (int k = 0; k < 8; k++) o[k] = P::ld(h[k]);
  }
  __device__ static V make(const float *o) {
    V v;
    half16 *h = (half16 *)&v;
#pragma unroll
    for (int k = 0; k < 8; k++) h[k] = P::st(o[k]);
    return v;
  }
};
// BnPack4 is 8 bytes of a 16-bit storage: rows of a multiple of four
// values but not of eight (ResNet-50's and MobileNet's 14x14 planes).
template <typename P> struct BnPack4 {
  typedef uint2 V;
  static const int W = 4;
  __device__ static void get(const V &v, float *o) {
    const half16 *h = (const half16 *)&v;
#pragma unroll
    for (int k = 0; k < 4; k++) o[k] = P::ld(h[k]);
  }
  __device__ static V make(const float *o) {
    V v;
    half16 *h = (half16 *)&v;
#pragma unroll
    for (int k = 0; k < 4; k++) h[k] = P::st(o[k]);
    return v;
  }
};
template <> struct BnPack<StoreF32> {
  typedef float4 V;
  static const int W = 4;
  __device__ static void get(const V &v, float *o) { o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
  __device__ static V make(const float *o) { return make_float4(o[0], o[1], o[2], o[3]); }
};
template <> struct BnPack<StoreF64> {
  typedef double2 V;
  static const int W = 2;
  __device__ static void get(const V &v, double *o) { o[0] = v.x; o[1] = v.y; }
  __device__ static V make(const double *o) { return make_double2(o[0], o[1]); }
};

// bnPacked says whether the rows of s values at p (and at q) can be read
// 16 bytes at a time.
template <typename P> __device__ bool bnPacked(const void *p, const void *q, int s) {
  return s % BnPack<P>::W == 0 && (((uint64)p | (uint64)q) & 15) == 0;
}

// bnPacked4 says whether the rows of a 16-bit storage can be read 8 bytes
// at a time (BnPack4).
template <typename P> __device__ bool bnPacked4(const void *p, const void *q, int s) {
  return s % 4 == 0 && (((uint64)p | (uint64)q) & 7) == 0;
}

// BN_UNROLL is how many 16-byte loads of each array a lane issues before
// it uses them (the loads are written out ahead of the stores, as the
// compiler may not move a load past a store to memory it cannot prove
// apart).
#define BN_UNROLL 4

// bnRowPacked calls g(j, a[j], b[j]) for the lane's 16-byte vectors j of
// a row of nv, BN_UNROLL vectors of each array loaded before any is used.
template <typename V, typename G>
__device__ void bnRowPacked(const V *pa, const V *pb, int nv, int lane, G g) {
  for (int j0 = lane; j0 < nv; j0 += 32 * BN_UNROLL) {
    V va[BN_UNROLL], vb[BN_UNROLL];
#pragma unroll
    for (int u = 0; u < BN_UNROLL; u++) {
      int j = j0 + 32 * u;
      if (j < nv) {
        va[u] = pa[j];
        vb[u] = pb[j];
      }
    }
#pragma unroll
    for (int u = 0; u < BN_UNROLL; u++) {
      int j = j0 + 32 * u;
      if (j < nv) g(j, va[u], vb[u]);
    }
  }
}

// bnRowMapWith is bnRowMap over the packs K of a row (s a multiple of
// K::W, the arrays aligned to K's size).
template <typename P, typename K, typename F>
__device__ void bnRowMapWith(const typename P::E *a, const typename P::E *b, typename P::E *out, int s, int lane,
                             F f) {
  typedef typename P::T T;
  typedef typename K::V V;
  V *po = (V *)out;
  bnRowPacked<V>((const V *)a, (const V *)b, s / K::W, lane, [&](int j, const V &va, const V &vb) {
    T ea[K::W], eb[K::W], eo[K::W];
    K::get(va, ea);
    K::get(vb, eb);
#pragma unroll
    for (int k = 0; k < K::W; k++) eo[k] = f(ea[k], eb[k]);
    po[j] = K::make(eo);
  });
}

// bnRowMap sets out[j] = f(a[j], b[j]) over the lane's share of a row of s
// values (b may be a, out may be either): 16 bytes at a time where the row
// allows, 8 for a 16-bit storage whose rows allow that only, else one
// value at a time.
template <typename P, typename F>
__device__ void bnRowMap(const typename P::E *a, const typename P::E *b, typename P::E *out, int s, int lane, F f) {
  if (bnPacked<P>(a, b, s) && ((uint64)out & 15) == 0) {
    bnRowMapWith<P, BnPack<P>>(a, b, out, s, lane, f);
    return;
  }
  if constexpr (sizeof(typename P::E) == 2) {
    if (bnPacked4<P>(a, b, s) && ((uint64)out & 7) == 0) {
      bnRowMapWith<P, BnPack4<P>>(a, b, out, s, lane, f);
      return;
    }
  }
  for (int j = lane; j < s; j += 32) out[j] = P::st(f(P::ld(a[j]), P::ld(b[j])));
}

// bnRowVisitWith is bnRowVisit over the packs K of a row.
template <typename P, typename K, typename F>
__device__ void bnRowVisitWith(const typename P::E *a, const typename P::E *b, int s, int lane, F f) {
  typedef typename P::T T;
  typedef typename K::V V;
  bnRowPacked<V>((const V *)a, (const V *)b, s / K::W, lane, [&](int, const V &va, const V &vb) {
    T ea[K::W], eb[K::W];
    K::get(va, ea);
    K::get(vb, eb);
#pragma unroll
    for (int k = 0; k < K::W; k++) f(ea[k], eb[k]);
  });
}

// bnRowVisit calls f(a[j], b[j]) over the lane's share of a row, packed as
// bnRowMap reads.
template <typename P, typename F>
__device__ void bnRowVisit(const typename P::E *a, const typename P::E *b, int s, int lane, F f) {
  if (bnPacked<P>(a, b, s)) {
    bnRowVisitWith<P, BnPack<P>>(a, b, s, lane, f);
    return;
  }
  if constexpr (sizeof(typename P::E) == 2) {
    if (bnPacked4<P>(a, b, s)) {
      bnRowVisitWith<P, BnPack4<P>>(a, b, s, lane, f);
      return;
    }
  }
  for (int j = lane; j < s; j += 32) f(P::ld(a[j]), P::ld(b[j]));
}

template <typename T> __device__ T bnWarpSum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(BN_FULL_MASK, v, o);
  return v;
}

// The warp loop: warp w of the grid takes rows (or channels) w, w +
// warps, ...
#define BN_WARPS(r, rows) BN_ROWS(r, rows)
#define BN_ROWS(r, rows)                                                      \
  int lane = threadIdx.x & 31;                                                \
  for (int r = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5); r < (rows); \
       r += (int)((gridDim.x * blockDim.x) >> 5))

template <typename P>
__device__ void bnRowStats(int rows, int s, const typename P::E *x, typename P::T *rowMean, typename P::T *rowM2) {
  typedef typename P::T T;
  BN_ROWS(r, rows) {
    const typename P::E *p = x + (long long)r * s;
    int k = 0;
    T mean = 0, m2 = 0;
    bnRowVisit<P>(p, p, s, lane, [&](T v, T) {
      k++;
      T d = v - mean;
      mean += d / T(k);
      m2 += d * (v - mean);
    });
    // Chan's merge of the lanes' (count, mean, m2).
    for (int o = 16; o > 0; o >>= 1) {
      int kb = __shfl_xor_sync(BN_FULL_MASK, k, o);
      T mb = __shfl_xor_sync(BN_FULL_MASK, mean, o);
      T m2b = __shfl_xor_sync(BN_FULL_MASK, m2, o);
      if (kb > 0) {
        int kn = k + kb;
        T d = mb - mean, f = T(kb) / T(kn);
        mean += d * f;
        m2 += m2b + d * d * T(k) * f;
        k = kn;
      }
    }
    if (lane == 0) {
      rowMean[r] = mean;
      rowM2[r] = m2;
    }
  }
}

// bnChannelStats merges channel ch's num rows (each of s values) into the
// batch's mean and 1/sqrt(var + eps), var the biased variance, and folds
// mean and corr*var (corr = m/(m-1), Bessel's) into the running sums as
// bn_running_sums does. A warp per channel, its lanes over the rows.
#define BN_CHANNEL_STATS(T, S, MUL, ADD)                                                            \
  extern "C" __global__ void bn_channel_stats_##S(int num, int c, int s, const T *rowMean,         \
                                                  const T *rowM2, T eps, T maf, T corr,            \
                                                  T *saveMean, T *saveInvStd, T *factor,           \
                                                  T *runMean, T *runVar) {                         \
    BN_WARPS(i, c) {                                                                               \
      T mean = 0;                                                                                  \
      for (int n = lane; n < num; n += 32) mean += rowMean[n * c + i];                             \
      mean = bnWarpSum(mean) / T(num);                                                             \
      T m2 = 0;                                                                                    \
      for (int n = lane; n < num; n += 32) {                                                       \
        T d = rowMean[n * c + i] - mean;                                                           \
        m2 += rowM2[n * c + i] + T(s) * d * d;                                                     \
      }                                                                                            \
      m2 = bnWarpSum(m2);                                                                          \
      if (lane == 0) {                                                                             \
        T var = m2 / (T(num) * T(s));                                                              \
        saveMean[i] = mean;                                                                        \
        saveInvStd[i] = T(1) / sqrt(var + eps);                                                    \
        runMean[i] = ADD(MUL(maf, runMean[i]), mean);                                              \
        runVar[i] = ADD(MUL(maf, runVar[i]), MUL(corr, var));                                      \
        if (i == 0) factor[0] = ADD(MUL(maf, factor[0]), T(1));                                    \
      }                                                                                            \
    }                                                                                              \
  }
BN_CHANNEL_STATS(float, f32, __fmul_rn, __fadd_rn)
BN_CHANNEL_STATS(double, f64, __dmul_rn, __dadd_rn)

// bn_global_stats: the statistics from the running sums, mean = runMean/f
// and var = runVar/f for the scale factor f (0 when f is 0, as Caffe).
#define BN_GLOBAL_STATS(T, S)                                                                      \
  extern "C" __global__ void bn_global_stats_##S(int c, T eps, const T *factor, const T *runMean, \
                                                 const T *runVar, T *saveMean, T *saveInvStd) {   \
    T f = factor[0] == 0 ? T(0) : T(1) / factor[0];                                                \
    KERNEL_LOOP(i, c) {                                                                            \
      saveMean[i] = f * runMean[i];                                                                \
      saveInvStd[i] = T(1) / sqrt(f * runVar[i] + eps);                                            \
    }                                                                                              \
  }
BOTH_TYPES(BN_GLOBAL_STATS)

// BnAffine is channel ch's z = (x - mean) * a + b, a = invStd * gamma and
// b = beta (gamma and beta optional: one and zero), computed the same way
// (one fused multiply-add) in the forward and the backward kernels, which
// must agree on the sign of z.
template <typename T> struct BnAffine {
  T m, a, b;
  __device__ BnAffine(int ch, const T *mean, const T *invStd, const T *gamma, const T *beta)
      : m(mean[ch]), a(invStd[ch] * (gamma ? gamma[ch] : T(1))), b(beta ? beta[ch] : T(0)) {}
  __device__ T z(T v) const { return fma(v - m, a, b); }
};

// bnReLUGrad is Caffe's ReLU gradient factor for output z: 1 where z > 0,
// slope where z <= 0, 0 where z is NaN.
template <typename T> __device__ T bnReLUGrad(T z, T slope) { return T(z > 0) + T(z <= 0) * slope; }

// bnApply: y = z, or with relu ReLU(z) = z > 0 ? z : z * slope.
template <typename P>
__device__ void bnApply(int rows, int c, int s, const typename P::E *x, const typename P::T *mean,
                        const typename P::T *invStd, const typename P::T *gamma, const typename P::T *beta,
                        int relu, typename P::T slope, typename P::E *y) {
  typedef typename P::T T;
  BN_ROWS(r, rows) {
    BnAffine<T> f(r % c, mean, invStd, gamma, beta);
    long long off = (long long)r * s;
    if (relu) {
      bnRowMap<P>(x + off, x + off, y + off, s, lane, [&](T v, T) {
        T z = f.z(v);
        return z > 0 ? z : z * slope;
      });
    } else {
      bnRowMap<P>(x + off, x + off, y + off, s, lane, [&](T v, T) { return f.z(v); });
    }
  }
}

// bnRowGradSums: per row, sum dy (rowDB) and sum dy * (x - mean) (rowDS),
// dy masked by the fused ReLU's gradient if relu.
template <typename P>
__device__ void bnRowGradSums(int rows, int c, int s, const typename P::E *dy, const typename P::E *x,
                              const typename P::T *mean, const typename P::T *invStd,
                              const typename P::T *gamma, const typename P::T *beta, int relu,
                              typename P::T slope, typename P::T *rowDB, typename P::T *rowDS) {
  typedef typename P::T T;
  BN_ROWS(r, rows) {
    BnAffine<T> f(r % c, mean, invStd, gamma, beta);
    T m = f.m, sb = 0, sd = 0;
    long long off = (long long)r * s;
    bnRowVisit<P>(dy + off, x + off, s, lane, [&](T g, T v) {
      if (relu) g *= bnReLUGrad(f.z(v), slope);
      sb += g;
      sd += g * (v - m);
    });
    sb = bnWarpSum(sb);
    sd = bnWarpSum(sd);
    if (lane == 0) {
      rowDB[r] = sb;
      rowDS[r] = sd;
    }
  }
}

// bnChannelGrad sums channel ch's rows into db = sum dy and ds = sum dy *
// xhat, adds them to dBeta and dGamma where those are not null, and sets
// dx's coefficients: A = gamma/std, and with batch statistics (global 0)
// B = -A/std * ds/m and C = -A * db/m, m = num*s; with global statistics
// B = C = 0 (the statistics are constants).
template <typename T>
__device__ void bnChannelGrad(int num, int c, int s, int global, const T *rowDB, const T *rowDS,
                              const T *invStd, const T *gamma, T *dGamma, T *dBeta, T *coef) {
  BN_WARPS(i, c) {
    T db = 0, ds = 0;
    for (int n = lane; n < num; n += 32) {
      db += rowDB[n * c + i];
      ds += rowDS[n * c + i];
    }
    db = bnWarpSum(db);
    ds = bnWarpSum(ds);
    if (lane == 0) {
      T is = invStd[i];
      ds *= is;
      if (dGamma) dGamma[i] += ds;
      if (dBeta) dBeta[i] += db;
      T a = is * (gamma ? gamma[i] : T(1)), m = T(num) * T(s);
      coef[i] = a;
      coef[c + i] = global ? T(0) : -a * is * ds / m;
      coef[2 * c + i] = global ? T(0) : -a * db / m;
    }
  }
}

// bnGradApply: dx = A*dy + B*(x - mean) + C (dx may be dy), dy masked by
// the fused ReLU's gradient if relu.
template <typename P>
__device__ void bnGradApply(int rows, int c, int s, const typename P::E *dy, const typename P::E *x,
                            const typename P::T *mean, const typename P::T *invStd,
                            const typename P::T *gamma, const typename P::T *beta, int relu,
                            typename P::T slope, const typename P::T *coef, typename P::E *dx) {
  typedef typename P::T T;
  BN_ROWS(r, rows) {
    int ch = r % c;
    T m = mean[ch], a = coef[ch], b = coef[c + ch], cc = coef[2 * c + ch];
    long long off = (long long)r * s;
    if (relu) {
      BnAffine<T> f(ch, mean, invStd, gamma, beta);
      bnRowMap<P>(dy + off, x + off, dx + off, s, lane, [&](T g, T v) {
        g *= bnReLUGrad(f.z(v), slope);
        return a * g + b * (v - m) + cc;
      });
      continue;
    }
    // With global statistics (b and cc zero) x is not read (the caller
    // may pass dy) and dx keeps the sign of a zero dy, as Caffe's dy/std.
    if (b == T(0) && cc == T(0)) {
      bnRowMap<P>(dy + off, dy + off, dx + off, s, lane, [&](T g, T) { return a * g; });
    } else {
      bnRowMap<P>(dy + off, x + off, dx + off, s, lane, [&](T g, T v) { return a * g + b * (v - m) + cc; });
    }
  }
}

// The row kernels for each storage of the activations (x, y, dy, dx):
// the 16-bit ones compute in float, with the statistics, the Scale's
// parameters and the coefficients in float (the f32 kernels of the
// per-channel passes serve them).
#define BN_ROW(P, S)                                                                               \
  extern "C" __global__ void bn_row_stats_##S(int rows, int s, const P::E *x, P::T *rowMean,       \
                                              P::T *rowM2) {                                       \
    bnRowStats<P>(rows, s, x, rowMean, rowM2);                                                     \
  }                                                                                                \
  extern "C" __global__ void bn_apply_##S(int rows, int c, int s, const P::E *x,                   \
                                          const P::T *mean, const P::T *invStd,                    \
                                          const P::T *gamma, const P::T *beta, int relu,          \
                                          P::T slope, P::E *y) {                                   \
    bnApply<P>(rows, c, s, x, mean, invStd, gamma, beta, relu, slope, y);                          \
  }                                                                                                \
  extern "C" __global__ void bn_row_grad_sums_##S(int rows, int c, int s, const P::E *dy,          \
                                                  const P::E *x, const P::T *mean,                 \
                                                  const P::T *invStd, const P::T *gamma,           \
                                                  const P::T *beta, int relu, P::T slope,          \
                                                  P::T *rowDB, P::T *rowDS) {                      \
    bnRowGradSums<P>(rows, c, s, dy, x, mean, invStd, gamma, beta, relu, slope, rowDB, rowDS);     \
  }                                                                                                \
  extern "C" __global__ void bn_grad_apply_##S(int rows, int c, int s, const P::E *dy,             \
                                               const P::E *x, const P::T *mean,                    \
                                               const P::T *invStd, const P::T *gamma,              \
                                               const P::T *beta, int relu, P::T slope,             \
                                               const P::T *coef, P::E *dx) {                       \
    bnGradApply<P>(rows, c, s, dy, x, mean, invStd, gamma, beta, relu, slope, coef, dx);           \
  }
ALL_STORAGES(BN_ROW)

#define BN_CHANNEL_GRAD(T, S)                                                                      \
  extern "C" __global__ void bn_channel_grad_##S(int num, int c, int s, int global,               \
                                                 const T *rowDB, const T *rowDS, const T *invStd, \
                                                 const T *gamma, T *dGamma, T *dBeta, T *coef) {  \
    bnChannelGrad<T>(num, c, s, global, rowDB, rowDS, invStd, gamma, dGamma, dBeta, coef);         \
  }
BOTH_TYPES(BN_CHANNEL_GRAD)

// One block per channel, for channels of at most BN_BLOCK_THREADS * 32
// values (ResNet's and MobileNet's last stages at 14x14 and 7x7): each
// thread keeps its K values of x (and dy) in registers, so a pass reads
// each array once and writes once, in one launch, where the row kernels
// read x twice and launch three times. The variance is the mean of the
// squared deviations from the mean, both from the registers.
#define BN_BLOCK_THREADS 512

// bnRound: products and sums rounded as bn_running_sums rounds them.
template <typename T> struct bnRound;
template <> struct bnRound<float> {
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
};
template <> struct bnRound<double> {
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
};

// bnBlockSum returns the sum of v over the block, to every thread.
template <typename T> __device__ T bnBlockSum(T v) {
  __shared__ T part[BN_BLOCK_THREADS / 32];
  __syncthreads(); // part may still be read from the previous call
  v = bnWarpSum(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  T t = 0;
  for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += part[w];
  return t;
}

// BN_BLOCK_AT: the address of channel ch's k-th value (k = n*s + i).
#define BN_BLOCK_AT(k) ((((long long)((k) / s)) * c + ch) * s + (k) % s)

template <typename P, int K>
__device__ void bnBlockForward(int num, int c, int s, const typename P::E *x, typename P::T eps,
                               typename P::T maf, typename P::T corr, typename P::T *saveMean,
                               typename P::T *saveInvStd, typename P::T *factor, typename P::T *runMean,
                               typename P::T *runVar, const typename P::T *gamma, const typename P::T *beta,
                               int relu, typename P::T slope, typename P::E *y) {
  typedef typename P::T T;
  int ch = blockIdx.x, m = num * s;
  T v[K], sum = 0;
#pragma unroll
  for (int j = 0; j < K; j++) {
    int k = threadIdx.x + j * BN_BLOCK_THREADS;
    v[j] = k < m ? P::ld(x[BN_BLOCK_AT(k)]) : T(0);
    sum += v[j];
  }
  T mean = bnBlockSum(sum) / T(m), sq = 0;
#pragma unroll
  for (int j = 0; j < K; j++) {
    T d = v[j] - mean;
    if (threadIdx.x + j * BN_BLOCK_THREADS < m) sq += d * d;
  }
  T var = bnBlockSum(sq) / T(m);
  T invStd = T(1) / sqrt(var + eps);
  if (threadIdx.x == 0) {
    saveMean[ch] = mean;
    saveInvStd[ch] = invStd;
    runMean[ch] = bnRound<T>::add(bnRound<T>::mul(maf, runMean[ch]), mean);
    runVar[ch] = bnRound<T>::add(bnRound<T>::mul(maf, runVar[ch]), bnRound<T>::mul(corr, var));
    if (ch == 0) factor[0] = bnRound<T>::add(bnRound<T>::mul(maf, factor[0]), T(1));
  }
  // The same a and b as the backward pass's BnAffine, which reads mean
  // and invStd back.
  T a = invStd * (gamma ? gamma[ch] : T(1)), b = beta ? beta[ch] : T(0);
#pragma unroll
  for (int j = 0; j < K; j++) {
    int k = threadIdx.x + j * BN_BLOCK_THREADS;
    if (k < m) {
      T z = fma(v[j] - mean, a, b);
      y[BN_BLOCK_AT(k)] = P::st(relu ? (z > 0 ? z : z * slope) : z);
    }
  }
}

template <typename P, int K>
__device__ void bnBlockBackward(int num, int c, int s, const typename P::E *dy, const typename P::E *x,
                                const typename P::T *mean, const typename P::T *invStd,
                                const typename P::T *gamma, const typename P::T *beta, int relu,
                                typename P::T slope, typename P::T *dGamma, typename P::T *dBeta,
                                typename P::E *dx) {
  typedef typename P::T T;
  int ch = blockIdx.x, m = num * s;
  BnAffine<T> f(ch, mean, invStd, gamma, beta);
  T g[K], d[K], sb = 0, sd = 0;
#pragma unroll
  for (int j = 0; j < K; j++) {
    int k = threadIdx.x + j * BN_BLOCK_THREADS;
    g[j] = d[j] = 0;
    if (k < m) {
      long long at = BN_BLOCK_AT(k);
      T v = P::ld(x[at]);
      g[j] = P::ld(dy[at]);
      if (relu) g[j] *= bnReLUGrad(f.z(v), slope);
      d[j] = v - f.m;
    }
  }
#pragma unroll
  for (int j = 0; j < K; j++) {
    sb += g[j];
    sd += g[j] * d[j];
  }
  T db = bnBlockSum(sb), is = invStd[ch], ds = bnBlockSum(sd) * is;
  if (threadIdx.x == 0) {
    if (dGamma) dGamma[ch] += ds;
    if (dBeta) dBeta[ch] += db;
  }
  if (!dx) return;
  T a = is * (gamma ? gamma[ch] : T(1)), tm = T(m);
  T cb = -a * is * ds / tm, cc = -a * db / tm;
#pragma unroll
  for (int j = 0; j < K; j++) {
    int k = threadIdx.x + j * BN_BLOCK_THREADS;
    if (k < m) dx[BN_BLOCK_AT(k)] = P::st(a * g[j] + cb * d[j] + cc);
  }
}

#define BN_BLOCK(P, S, K)                                                                          \
  extern "C" __global__ void __launch_bounds__(BN_BLOCK_THREADS) bn_block_forward_k##K##_##S(     \
      int num, int c, int s, const P::E *x, P::T eps, P::T maf, P::T corr, P::T *saveMean,         \
      P::T *saveInvStd, P::T *factor, P::T *runMean, P::T *runVar, const P::T *gamma,              \
      const P::T *beta, int relu, P::T slope, P::E *y) {                                           \
    bnBlockForward<P, K>(num, c, s, x, eps, maf, corr, saveMean, saveInvStd, factor, runMean,      \
                         runVar, gamma, beta, relu, slope, y);                                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(BN_BLOCK_THREADS) bn_block_backward_k##K##_##S(    \
      int num, int c, int s, const P::E *dy, const P::E *x, const P::T *mean, const P::T *invStd,  \
      const P::T *gamma, const P::T *beta, int relu, P::T slope, P::T *dGamma, P::T *dBeta,        \
      P::E *dx) {                                                                                  \
    bnBlockBackward<P, K>(num, c, s, dy, x, mean, invStd, gamma, beta, relu, slope, dGamma, dBeta, \
                          dx);                                                                     \
  }
#define BN_BLOCK_ALL(P, S) \
  BN_BLOCK(P, S, 1) BN_BLOCK(P, S, 2) BN_BLOCK(P, S, 4) BN_BLOCK(P, S, 8) BN_BLOCK(P, S, 16) BN_BLOCK(P, S, 32)
ALL_STORAGES(BN_BLOCK_ALL)

// Channels-last (NHWC) data in a 16-bit storage: each of the m = num *
// spatial positions holds its c channels together (c a multiple of 8, the
// arrays aligned to 16 bytes). Every pass runs over chunks of len
// positions (chunks * len = m): a block takes one chunk and up to 256
// vectors of 8 channels, its threads in BN_CL_THREADS / cv rows of cv
// vectors, each row walking every rows-th position of the chunk, so that
// a warp reads whole runs of a position's channels and each thread keeps
// its 8 channels' statistics and coefficients in registers. The sums'
// rows are merged in shared memory and each chunk's per-channel results
// written where the row kernels write each row's ([chunk * c + ch]), so
// that bn_channel_stats and bn_channel_grad merge them unchanged (their
// num is chunks, their s len).
#define BN_CL_THREADS 256
#define BN_CL_V 8
// BN_CL_AHEAD: the 16-byte vectors of each array a thread loads before it
// uses them.
#define BN_CL_AHEAD 4

// bnClShape: this thread's place in a chunk's block (see above).
struct BnClShape {
  int cv, rows, row, ch;
  __device__ BnClShape(int c) {
    int vectors = c / BN_CL_V;
    cv = min(vectors, BN_CL_THREADS);
    rows = BN_CL_THREADS / cv;
    row = threadIdx.x / cv;
    ch = (blockIdx.y * cv + threadIdx.x % cv) * BN_CL_V;
  }
  __device__ bool active(int c) const { return row < rows && ch < c; }
};

// bnClWalk calls f(v, ...) with each of the thread's positions' 8 values
// of the arrays a and b (b may be a), BN_CL_AHEAD positions loaded at a
// time.
template <typename P, typename F>
__device__ void bnClWalk(const BnClShape &t, int len, int c, const typename P::E *a, const typename P::E *b, F f) {
  long long base = (long long)blockIdx.x * len * c + t.ch;
  for (int p0 = t.row; p0 < len; p0 += t.rows * BN_CL_AHEAD) {
    uint4 va[BN_CL_AHEAD], vb[BN_CL_AHEAD];
#pragma unroll
    for (int u = 0; u < BN_CL_AHEAD; u++) {
      int p = p0 + u * t.rows;
      if (p < len) {
        va[u] = *(const uint4 *)(a + base + (long long)p * c);
        vb[u] = *(const uint4 *)(b + base + (long long)p * c);
      }
    }
#pragma unroll
    for (int u = 0; u < BN_CL_AHEAD; u++) {
      int p = p0 + u * t.rows;
      if (p < len) {
        float x[BN_CL_V], y[BN_CL_V];
        BnPack<P>::get(va[u], x);
        BnPack<P>::get(vb[u], y);
        f(base + (long long)p * c, x, y);
      }
    }
  }
}

template <typename P>
__device__ void bnClStats(int len, int c, const typename P::E *x, float *partMean, float *partM2) {
  __shared__ float sMean[BN_CL_THREADS * BN_CL_V], sM2[BN_CL_THREADS * BN_CL_V];
  __shared__ int sCount[BN_CL_THREADS];
  BnClShape t(c);
  float mean[BN_CL_V], m2[BN_CL_V];
#pragma unroll
  for (int k = 0; k < BN_CL_V; k++) mean[k] = m2[k] = 0;
  int count = 0;
  if (t.active(c)) {
    bnClWalk<P>(t, len, c, x, x, [&](long long, const float *v, const float *) {
      count++;
      float inv = 1.0f / count;
#pragma unroll
      for (int k = 0; k < BN_CL_V; k++) {
        float d = v[k] - mean[k];
        mean[k] += d * inv;
        m2[k] += d * (v[k] - mean[k]);
      }
    });
  }
#pragma unroll
  for (int k = 0; k < BN_CL_V; k++) {
    sMean[threadIdx.x * BN_CL_V + k] = mean[k];
    sM2[threadIdx.x * BN_CL_V + k] = m2[k];
  }
  sCount[threadIdx.x] = count;
  __syncthreads();
  // Row 0 merges the other rows' (count, mean, m2), Chan's formula.
  if (t.row == 0 && t.active(c)) {
    for (int r = 1; r < t.rows; r++) {
      int o = r * t.cv + threadIdx.x, kb = sCount[o];
      if (kb == 0) continue;
      int kn = count + kb;
      float f = (float)kb / kn;
#pragma unroll
      for (int k = 0; k < BN_CL_V; k++) {
        float d = sMean[o * BN_CL_V + k] - mean[k];
        mean[k] += d * f;
        m2[k] += sM2[o * BN_CL_V + k] + d * d * count * f;
      }
      count = kn;
    }
    long long at = (long long)blockIdx.x * c + t.ch;
#pragma unroll
    for (int k = 0; k < BN_CL_V; k++) {
      partMean[at + k] = mean[k];
      partM2[at + k] = m2[k];
    }
  }
}

// BnClAffine holds the thread's 8 channels' BnAffine (the same arithmetic
// as the row kernels').
struct BnClAffine {
  float m[BN_CL_V], a[BN_CL_V], b[BN_CL_V];
  __device__ BnClAffine(int ch, const float *mean, const float *invStd, const float *gamma, const float *beta) {
#pragma unroll
    for (int k = 0; k < BN_CL_V; k++) {
      BnAffine<float> f(ch + k, mean, invStd, gamma, beta);
      m[k] = f.m;
      a[k] = f.a;
      b[k] = f.b;
    }
  }
  __device__ float z(int k, float v) const { return fmaf(v - m[k], a[k], b[k]); }
};

template <typename P>
__device__ void bnClGradSums(int len, int c, const typename P::E *dy, const typename P::E *x, const float *mean,
                             const float *invStd, const float *gamma, const float *beta, int relu, float slope,
                             float *partDB, float *partDS) {
  __shared__ float sB[BN_CL_THREADS * BN_CL_V], sD[BN_CL_THREADS * BN_CL_V];
  BnClShape t(c);
  float sb[BN_CL_V], sd[BN_CL_V];
#pragma unroll
  for (int k = 0; k < BN_CL_V; k++) sb[k] = sd[k] = 0;
  if (t.active(c)) {
    BnClAffine f(t.ch, mean, invStd, gamma, beta);
    bnClWalk<P>(t, len, c, dy, x, [&](long long, const float *g, const float *v) {
#pragma unroll
      for (int k = 0; k < BN_CL_V; k++) {
        float gk = relu ? g[k] * bnReLUGrad(f.z(k, v[k]), slope) : g[k];
        sb[k] += gk;
        sd[k] += gk * (v[k] - f.m[k]);
      }
    });
  }
#pragma unroll
  for (int k = 0; k < BN_CL_V; k++) {
    sB[threadIdx.x * BN_CL_V + k] = sb[k];
    sD[threadIdx.x * BN_CL_V + k] = sd[k];
  }
  __syncthreads();
  if (t.row == 0 && t.active(c)) {
    for (int r = 1; r < t.rows; r++) {
      int o = (r * t.cv + threadIdx.x) * BN_CL_V;
#pragma unroll
      for (int k = 0; k < BN_CL_V; k++) {
        sb[k] += sB[o + k];
        sd[k] += sD[o + k];
      }
    }
    long long at = (long long)blockIdx.x * c + t.ch;
#pragma unroll
    for (int k = 0; k < BN_CL_V; k++) {
      partDB[at + k] = sb[k];
      partDS[at + k] = sd[k];
    }
  }
}

// bnClApply: y = z or ReLU(z), z = (x - mean) * a + b.
template <typename P>
__device__ void bnClApply(int len, int c, const typename P::E *x, const float *mean, const float *invStd,
                          const float *gamma, const float *beta, int relu, float slope, typename P::E *y) {
  BnClShape t(c);
  if (!t.active(c)) return;
  BnClAffine f(t.ch, mean, invStd, gamma, beta);
  bnClWalk<P>(t, len, c, x, x, [&](long long at, const float *v, const float *) {
    float o[BN_CL_V];
#pragma unroll
    for (int k = 0; k < BN_CL_V; k++) {
      float z = f.z(k, v[k]);
      o[k] = relu ? (z > 0 ? z : z * slope) : z;
    }
    *(uint4 *)(y + at) = BnPack<P>::make(o);
  });
}

// bnClGradApply: dx = A*dy + B*(x - mean) + C, dy masked by the fused
// ReLU's gradient; dx may be dy.
template <typename P>
__device__ void bnClGradApply(int len, int c, const typename P::E *dy, const typename P::E *x, const float *mean,
                              const float *invStd, const float *gamma, const float *beta, int relu, float slope,
                              const float *coef, typename P::E *dx) {
  BnClShape t(c);
  if (!t.active(c)) return;
  BnClAffine f(t.ch, mean, invStd, gamma, beta);
  float ca[BN_CL_V], cb[BN_CL_V], cc[BN_CL_V];
#pragma unroll
  for (int k = 0; k < BN_CL_V; k++) {
    ca[k] = coef[t.ch + k];
    cb[k] = coef[c + t.ch + k];
    cc[k] = coef[2 * c + t.ch + k];
  }
  bnClWalk<P>(t, len, c, dy, x, [&](long long at, const float *g, const float *v) {
    float o[BN_CL_V];
#pragma unroll
    for (int k = 0; k < BN_CL_V; k++) {
      float gk = relu ? g[k] * bnReLUGrad(f.z(k, v[k]), slope) : g[k];
      o[k] = ca[k] * gk + cb[k] * (v[k] - f.m[k]) + cc[k];
    }
    *(uint4 *)(dx + at) = BnPack<P>::make(o);
  });
}

#define BN_CL(P, S)                                                                                    \
  extern "C" __global__ void __launch_bounds__(BN_CL_THREADS)                                          \
      bn_cl_stats_##S(int len, int c, const P::E *x, float *partMean, float *partM2) {                 \
    bnClStats<P>(len, c, x, partMean, partM2);                                                         \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(BN_CL_THREADS) bn_cl_grad_sums_##S(                     \
      int len, int c, const P::E *dy, const P::E *x, const float *mean, const float *invStd,           \
      const float *gamma, const float *beta, int relu, float slope, float *partDB, float *partDS) {    \
    bnClGradSums<P>(len, c, dy, x, mean, invStd, gamma, beta, relu, slope, partDB, partDS);            \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(BN_CL_THREADS)                                          \
      bn_cl_apply_##S(int len, int c, const P::E *x, const float *mean, const float *invStd,           \
                      const float *gamma, const float *beta, int relu, float slope, P::E *y) {         \
    bnClApply<P>(len, c, x, mean, invStd, gamma, beta, relu, slope, y);                                \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(BN_CL_THREADS) bn_cl_grad_apply_##S(                    \
      int len, int c, const P::E *dy, const P::E *x, const float *mean, const float *invStd,           \
      const float *gamma, const float *beta, int relu, float slope, const float *coef, P::E *dx) {     \
    bnClGradApply<P>(len, c, dy, x, mean, invStd, gamma, beta, relu, slope, coef, dx);                 \
  }
HALF_STORAGES(BN_CL)
