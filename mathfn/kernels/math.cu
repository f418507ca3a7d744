// Element-wise kernels and random number generation for package mathfn,
// compiled at run time by NVRTC for the device's own architecture. Each
// operation is instantiated for float (_f32) and double (_f64) with C names
// so the Go side can look them up.

typedef unsigned int uint32;
typedef unsigned long long uint64;

// Grid-stride loop over n elements, as Caffe's CUDA_KERNEL_LOOP.
#define KERNEL_LOOP(i, n)                                                  \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;     \
       i < (n); i += (long long)blockDim.x * gridDim.x)

#define BOTH_TYPES(MACRO) MACRO(float, f32) MACRO(double, f64)

// y[i] = alpha
#define SET(T, S)                                                          \
  extern "C" __global__ void set_##S(int n, T alpha, T *y) {               \
    KERNEL_LOOP(i, n) { y[i] = alpha; }                                    \
  }
BOTH_TYPES(SET)

// y[i] += alpha
#define ADD_SCALAR(T, S)                                                   \
  extern "C" __global__ void add_scalar_##S(int n, T alpha, T *y) {        \
    KERNEL_LOOP(i, n) { y[i] += alpha; }                                   \
  }
BOTH_TYPES(ADD_SCALAR)

// Binary element-wise operations y[i] = a[i] OP b[i]. Where a, b and y
// are all aligned to 16 bytes (a blob's arrays are) the kernel reads and
// writes 16-byte vectors (4 floats, 2 doubles), then the elements left
// one by one, and the Go side launches a thread per vector (binary): on
// the H100 a quarter more data a second (Split's backward pass is an add:
// ResNet-50's largest, 0.261 -> 0.208 ms).
template <typename T> struct Vec16;
template <> struct Vec16<float> {
  typedef float4 V;
  static const int W = 4;
};
template <> struct Vec16<double> {
  typedef double2 V;
  static const int W = 2;
};

template <typename T, typename F>
__device__ void binary_kernel(int n, const T *a, const T *b, T *y, F op) {
  typedef typename Vec16<T>::V V;
  const int W = Vec16<T>::W;
  if ((((uint64)a | (uint64)b | (uint64)y) & 15) == 0) {
    int nv = n / W;
    KERNEL_LOOP(i, nv) {
      V va = ((const V *)a)[i], vb = ((const V *)b)[i];
      T *ea = (T *)&va, *eb = (T *)&vb;
#pragma unroll
      for (int k = 0; k < W; k++) ea[k] = op(ea[k], eb[k]);
      ((V *)y)[i] = va;
    }
    KERNEL_LOOP(j, n - nv * W) {
      long long k = (long long)nv * W + j;
      y[k] = op(a[k], b[k]);
    }
    return;
  }
  KERNEL_LOOP(i, n) { y[i] = op(a[i], b[i]); }
}

#define BINARY(NAME, EXPR)                                                 \
  struct NAME##_op {                                                       \
    template <typename T> __device__ T operator()(T a, T b) const {        \
      return EXPR;                                                         \
    }                                                                      \
  };                                                                       \
  extern "C" __global__ void NAME##_f32(int n, const float *a,             \
                                        const float *b, float *y) {        \
    binary_kernel<float>(n, a, b, y, NAME##_op());                         \
  }                                                                        \
  extern "C" __global__ void NAME##_f64(int n, const double *a,            \
                                        const double *b, double *y) {      \
    binary_kernel<double>(n, a, b, y, NAME##_op());                        \
  }
BINARY(add, a + b)
BINARY(sub, a - b)
BINARY(mul, a * b)
BINARY(div, a / b)

// Unary element-wise operations y[i] = f(a[i]), with the float and double
// versions of the math function given separately.
#define UNARY(NAME, EXPR_F, EXPR_D)                                        \
  extern "C" __global__ void NAME##_f32(int n, const float *a, float *y) { \
    KERNEL_LOOP(i, n) { float x = a[i]; y[i] = EXPR_F; }                   \
  }                                                                        \
  extern "C" __global__ void NAME##_f64(int n, const double *a,            \
                                        double *y) {                       \
    KERNEL_LOOP(i, n) { double x = a[i]; y[i] = EXPR_D; }                  \
  }
UNARY(abs, fabsf(x), fabs(x))
UNARY(exp, expf(x), exp(x))
UNARY(log, logf(x), log(x))
UNARY(sqr, x * x, x * x)
UNARY(sqrt, sqrtf(x), sqrt(x))
UNARY(sign, (float)((0.0f < x) - (x < 0.0f)), (double)((0.0 < x) - (x < 0.0)))
UNARY(sgnbit, (float)(signbit(x) != 0), (double)(signbit(x) != 0))

// y[i] = a[i]^b
extern "C" __global__ void powx_f32(int n, const float *a, float b, float *y) {
  KERNEL_LOOP(i, n) { y[i] = powf(a[i], b); }
}
extern "C" __global__ void powx_f64(int n, const double *a, double b, double *y) {
  KERNEL_LOOP(i, n) { y[i] = pow(a[i], b); }
}

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011): a counter-based generator, so element i's numbers depend
// only on (key, i) and every thread can draw its own without shared state.
struct uint4x { uint32 x, y, z, w; };

__device__ __forceinline__ uint4x philox(uint64 counter, uint64 key) {
  uint32 c0 = (uint32)counter, c1 = (uint32)(counter >> 32), c2 = 0, c3 = 0;
  uint32 k0 = (uint32)key, k1 = (uint32)(key >> 32);
  for (int round = 0; round < 10; round++) {
    uint32 hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    uint32 hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    uint32 n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  uint4x r = {c0, c1, c2, c3};
  return r;
}

// Uniform in (0, 1]: never 0, so log() is safe for Box-Muller.
__device__ __forceinline__ float unit_f32(uint32 x) {
  return ((x >> 8) + 1) * (1.0f / 16777216.0f);
}
__device__ __forceinline__ double unit_f64(uint32 hi, uint32 lo) {
  uint64 bits = (((uint64)hi << 32) | lo) >> 11;
  return (bits + 1) * (1.0 / 9007199254740992.0);
}

// salted returns a pass's key: the key drawn on the host, mixed with the
// value at salt when there is one (SetRNGSalt). A replayed CUDA graph keeps
// the key it was recorded with; the salt, which the solver rewrites before
// each iteration, is what makes each replay draw new numbers.
__device__ __forceinline__ uint64 salted(uint64 key, const uint64 *salt) {
  if (salt == nullptr) return key;
  uint64 z = *salt + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return key ^ z ^ (z >> 31);
}

// r[i] ~ U(a, b)
extern "C" __global__ void rng_uniform_f32(int n, float a, float b, float *r, uint64 key, const uint64 *salt) {
  key = salted(key, salt);
  KERNEL_LOOP(i, n) { r[i] = a + (b - a) * unit_f32(philox(i, key).x); }
}
extern "C" __global__ void rng_uniform_f64(int n, double a, double b, double *r, uint64 key, const uint64 *salt) {
  key = salted(key, salt);
  KERNEL_LOOP(i, n) { uint4x v = philox(i, key); r[i] = a + (b - a) * unit_f64(v.x, v.y); }
}

// r[i] ~ N(mu, sigma^2) by Box-Muller on one element's own pair of uniforms.
extern "C" __global__ void rng_gaussian_f32(int n, float mu, float sigma, float *r, uint64 key, const uint64 *salt) {
  key = salted(key, salt);
  KERNEL_LOOP(i, n) {
    uint4x v = philox(i, key);
    float u1 = unit_f32(v.x), u2 = unit_f32(v.y);
    r[i] = mu + sigma * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}
extern "C" __global__ void rng_gaussian_f64(int n, double mu, double sigma, double *r, uint64 key, const uint64 *salt) {
  key = salted(key, salt);
  KERNEL_LOOP(i, n) {
    uint4x v = philox(i, key);
    double u1 = unit_f64(v.x, v.y), u2 = unit_f64(v.z, v.w);
    r[i] = mu + sigma * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
  }
}

// r[i] = 1 with probability p, else 0 (unsigned masks, as Dropout uses).
extern "C" __global__ void rng_bernoulli(int n, double p, uint32 *r, uint64 key, const uint64 *salt) {
  key = salted(key, salt);
  KERNEL_LOOP(i, n) { uint4x v = philox(i, key); r[i] = unit_f64(v.x, v.y) <= p ? 1u : 0u; }
}

// acc[0] += w * (x . y), in one block (DotAccumulate): a loss summed on the
// device, so that nothing waits for it inside an iteration.
#define DOT_ACCUMULATE(T, S)                                                          \
  extern "C" __global__ void dot_accumulate_##S(int n, const T *x, const T *y, T w, \
                                                T *acc) {                            \
    __shared__ double part[256];                                                      \
    double s = 0;                                                                     \
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += (double)x[i] * y[i];       \
    part[threadIdx.x] = s;                                                            \
    __syncthreads();                                                                  \
    for (int h = blockDim.x / 2; h > 0; h /= 2) {                                     \
      if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];                \
      __syncthreads();                                                                \
    }                                                                                 \
    if (threadIdx.x == 0) acc[0] += (T)(w * part[0]);                                 \
  }
BOTH_TYPES(DOT_ACCUMULATE)

// dst[i] = words[i] for i < n (at most 4): a few scalars written on the
// compute stream by a launch's arguments (StoreWords), where a copy from
// host memory would wait or race with the host's next write.
extern "C" __global__ void store_words(uint64 *dst, int n, uint64 w0, uint64 w1, uint64 w2, uint64 w3) {
  if (threadIdx.x == 0) {
    uint64 w[4] = {w0, w1, w2, w3};
    for (int i = 0; i < n; i++) dst[i] = w[i];
  }
}

// A fused SGD step (SGDStep): every learnable parameter in one launch, for
// the solver's update, where one launch per operation and parameter costs
// more host time than the device takes (ResNet-50: 320 parameter blobs).
// Each block takes one chunk of SGD_CHUNK elements of one parameter. The
// arithmetic is that of the separate operations, in their order:
// diff *= scale (iter_size), diff += decay * w or decay * sign(w) (weight
// decay, when not 0), h = rate * diff + momentum * h (Caffe's axpby: scal,
// then axpy, fused as cuBLAS's axpy is), diff = h, w -= diff.
struct SGDParam {
  void *data, *diff, *history;
  long long n;
  double lr_mult, decay;
};
struct SGDChunk {
  int param, pad;
  long long start;
};
#define SGD_CHUNK 4096
#define SGD_STEP(T, S)                                                     \
  extern "C" __global__ void sgd_step_##S(const SGDParam *params,          \
                                          const SGDChunk *chunks,          \
                                          double rate, const double *rate_at, \
                                          T momentum, T scale, int l1) {   \
    SGDChunk c = chunks[blockIdx.x];                                       \
    SGDParam p = params[c.param];                                          \
    if (rate_at != nullptr) rate = *rate_at;                               \
    T *w = (T *)p.data, *g = (T *)p.diff, *h = (T *)p.history;             \
    T r = (T)(rate * p.lr_mult), decay = (T)p.decay;                       \
    long long end = c.start + SGD_CHUNK < p.n ? c.start + SGD_CHUNK : p.n; \
    for (long long i = c.start + threadIdx.x; i < end; i += blockDim.x) {  \
      T d = g[i] * scale, x = w[i];                                        \
      if (decay != 0) {                                                    \
        T s = l1 ? (T)((T(0) < x) - (x < T(0))) : x;                       \
        d = fma(decay, s, d);                                              \
      }                                                                    \
      T v = fma(r, d, momentum * h[i]);                                    \
      h[i] = v;                                                            \
      g[i] = v;                                                            \
      w[i] = x - v;                                                        \
    }                                                                      \
  }
BOTH_TYPES(SGD_STEP)

// The gradients of every parameter of an SGD plan set to zero in one
// launch (ZeroDiffs), for the solver's ClearParamDiffs: one memset per
// parameter blob is a launch each (ResNet-50: 320 of them, about 1 ms of
// host time, spent at the start of an iteration while the device waits).
#define SGD_ZERO_DIFFS(T, S)                                                          \
  extern "C" __global__ void sgd_zero_diffs_##S(const SGDParam *params,              \
                                                const SGDChunk *chunks) {            \
    SGDChunk c = chunks[blockIdx.x];                                                  \
    SGDParam p = params[c.param];                                                     \
    T *g = (T *)p.diff;                                                               \
    long long end = c.start + SGD_CHUNK < p.n ? c.start + SGD_CHUNK : p.n;            \
    for (long long i = c.start + threadIdx.x; i < end; i += blockDim.x) g[i] = T(0); \
  }
BOTH_TYPES(SGD_ZERO_DIFFS)
