//go:build cuda

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "gocaffe_cudnn.h"

// Where cudnn.h is installed, hold the values gocaffe_cudnn.h declares to
// it: the build then fails instead of calling cuDNN with a wrong number.
#if defined(__has_include)
#if __has_include(<cudnn.h>)
#include <cudnn.h>
_Static_assert(CUDNN_DATA_FLOAT == GC_DNN_FLOAT, "CUDNN_DATA_FLOAT");
_Static_assert(CUDNN_DATA_DOUBLE == GC_DNN_DOUBLE, "CUDNN_DATA_DOUBLE");
_Static_assert(CUDNN_TENSOR_NCHW == GC_DNN_NCHW, "CUDNN_TENSOR_NCHW");
_Static_assert(CUDNN_TENSOR_NHWC == GC_DNN_NHWC, "CUDNN_TENSOR_NHWC");
_Static_assert(CUDNN_CROSS_CORRELATION == GC_DNN_CROSS_CORRELATION, "CUDNN_CROSS_CORRELATION");
_Static_assert(CUDNN_DEFAULT_MATH == GC_DNN_DEFAULT_MATH, "CUDNN_DEFAULT_MATH");
_Static_assert(CUDNN_TENSOR_OP_MATH == GC_DNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH");
_Static_assert(CUDNN_FMA_MATH == GC_DNN_FMA_MATH, "CUDNN_FMA_MATH");
_Static_assert(CUDNN_POOLING_MAX == GC_DNN_POOL_MAX, "CUDNN_POOLING_MAX");
_Static_assert(CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING == GC_DNN_POOL_AVE_PAD, "CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING");
_Static_assert(CUDNN_NOT_PROPAGATE_NAN == GC_DNN_NOT_PROPAGATE_NAN, "CUDNN_NOT_PROPAGATE_NAN");
_Static_assert(CUDNN_PROPAGATE_NAN == GC_DNN_PROPAGATE_NAN, "CUDNN_PROPAGATE_NAN");
_Static_assert(CUDNN_ACTIVATION_SIGMOID == GC_DNN_SIGMOID, "CUDNN_ACTIVATION_SIGMOID");
_Static_assert(CUDNN_ACTIVATION_RELU == GC_DNN_RELU, "CUDNN_ACTIVATION_RELU");
_Static_assert(CUDNN_ACTIVATION_TANH == GC_DNN_TANH, "CUDNN_ACTIVATION_TANH");
_Static_assert(CUDNN_SOFTMAX_ACCURATE == GC_DNN_SOFTMAX_ACCURATE, "CUDNN_SOFTMAX_ACCURATE");
_Static_assert(CUDNN_SOFTMAX_MODE_CHANNEL == GC_DNN_SOFTMAX_CHANNEL, "CUDNN_SOFTMAX_MODE_CHANNEL");
_Static_assert(CUDNN_LRN_CROSS_CHANNEL_DIM1 == GC_DNN_LRN_CROSS_CHANNEL, "CUDNN_LRN_CROSS_CHANNEL_DIM1");
_Static_assert(CUDNN_BATCHNORM_SPATIAL == GC_DNN_BN_SPATIAL, "CUDNN_BATCHNORM_SPATIAL");
#define GC_HAVE_CUDNN_H 1
#define GC_CHECK_PERF(T) _Static_assert(sizeof(T) == sizeof(gc_perf) && offsetof(T, memory) == offsetof(gc_perf, memory) && offsetof(T, mathType) == offsetof(gc_perf, math), #T)
#endif
#endif

// The algorithm records of the _v7 getters (the three have one layout).
typedef struct {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math;
  int reserved[3];
} gc_perf;

#ifdef GC_CHECK_PERF
GC_CHECK_PERF(cudnnConvolutionFwdAlgoPerf_t);
GC_CHECK_PERF(cudnnConvolutionBwdDataAlgoPerf_t);
GC_CHECK_PERF(cudnnConvolutionBwdFilterAlgoPerf_t);
#endif

typedef void *H;  // handle
typedef void *D;  // descriptor
typedef const void *CP;
typedef void *P;

// The entry points, looked up with dlsym. Their C types: every enum is an
// int, every handle and descriptor a pointer.
#define GC_DNN_FUNCS(X)                                                                              \
  X(size_t, cudnnGetVersion, (void))                                                                \
  X(const char *, cudnnGetErrorString, (int))                                                       \
  X(int, cudnnCreate, (H *))                                                                        \
  X(int, cudnnDestroy, (H))                                                                         \
  X(int, cudnnSetStream, (H, CUstream))                                                             \
  X(int, cudnnCreateTensorDescriptor, (D *))                                                        \
  X(int, cudnnDestroyTensorDescriptor, (D))                                                         \
  X(int, cudnnSetTensorNdDescriptor, (D, int, int, const int *, const int *))                       \
  X(int, cudnnCreateFilterDescriptor, (D *))                                                        \
  X(int, cudnnDestroyFilterDescriptor, (D))                                                         \
  X(int, cudnnSetFilterNdDescriptor, (D, int, int, int, const int *))                               \
  X(int, cudnnCreateConvolutionDescriptor, (D *))                                                   \
  X(int, cudnnDestroyConvolutionDescriptor, (D))                                                    \
  X(int, cudnnSetConvolutionNdDescriptor, (D, int, const int *, const int *, const int *, int, int)) \
  X(int, cudnnSetConvolutionGroupCount, (D, int))                                                   \
  X(int, cudnnSetConvolutionMathType, (D, int))                                                     \
  X(int, cudnnGetConvolutionForwardAlgorithm_v7, (H, D, D, D, D, int, int *, gc_perf *))           \
  X(int, cudnnGetConvolutionBackwardDataAlgorithm_v7, (H, D, D, D, D, int, int *, gc_perf *))      \
  X(int, cudnnGetConvolutionBackwardFilterAlgorithm_v7, (H, D, D, D, D, int, int *, gc_perf *))    \
  X(int, cudnnFindConvolutionForwardAlgorithmEx, (H, D, CP, D, CP, D, D, P, int, int *, gc_perf *, P, size_t)) \
  X(int, cudnnFindConvolutionBackwardDataAlgorithmEx, (H, D, CP, D, CP, D, D, P, int, int *, gc_perf *, P, size_t)) \
  X(int, cudnnFindConvolutionBackwardFilterAlgorithmEx, (H, D, CP, D, CP, D, D, P, int, int *, gc_perf *, P, size_t)) \
  X(int, cudnnConvolutionForward, (H, CP, D, CP, D, CP, D, int, P, size_t, CP, D, P))              \
  X(int, cudnnConvolutionBackwardData, (H, CP, D, CP, D, CP, D, int, P, size_t, CP, D, P))         \
  X(int, cudnnConvolutionBackwardFilter, (H, CP, D, CP, D, CP, D, int, P, size_t, CP, D, P))       \
  X(int, cudnnConvolutionBackwardBias, (H, CP, D, CP, CP, D, P))                                    \
  X(int, cudnnAddTensor, (H, CP, D, CP, CP, D, P))                                                  \
  X(int, cudnnCreatePoolingDescriptor, (D *))                                                       \
  X(int, cudnnDestroyPoolingDescriptor, (D))                                                        \
  X(int, cudnnSetPoolingNdDescriptor, (D, int, int, int, const int *, const int *, const int *))    \
  X(int, cudnnPoolingForward, (H, D, CP, D, CP, CP, D, P))                                          \
  X(int, cudnnPoolingBackward, (H, D, CP, D, CP, D, CP, D, CP, CP, D, P))                           \
  X(int, cudnnCreateActivationDescriptor, (D *))                                                    \
  X(int, cudnnDestroyActivationDescriptor, (D))                                                     \
  X(int, cudnnSetActivationDescriptor, (D, int, int, double))                                       \
  X(int, cudnnActivationForward, (H, D, CP, D, CP, CP, D, P))                                       \
  X(int, cudnnActivationBackward, (H, D, CP, D, CP, D, CP, D, CP, CP, D, P))                        \
  X(int, cudnnSoftmaxForward, (H, int, int, CP, D, CP, CP, D, P))                                   \
  X(int, cudnnSoftmaxBackward, (H, int, int, CP, D, CP, D, CP, CP, D, P))                           \
  X(int, cudnnCreateLRNDescriptor, (D *))                                                           \
  X(int, cudnnDestroyLRNDescriptor, (D))                                                            \
  X(int, cudnnSetLRNDescriptor, (D, unsigned, double, double, double))                              \
  X(int, cudnnLRNCrossChannelForward, (H, D, int, CP, D, CP, CP, D, P))                             \
  X(int, cudnnLRNCrossChannelBackward, (H, D, int, CP, D, CP, D, CP, D, CP, CP, D, P))

// Entry points gocaffe can do without: a cuDNN lacking them still serves
// the others.
#define GC_DNN_OPTIONAL_FUNCS(X)                                                                           \
  X(int, cudnnBatchNormalizationForwardTraining,                                                          \
    (H, int, CP, CP, D, CP, D, P, D, CP, CP, double, P, P, double, P, P))                                  \
  X(int, cudnnBatchNormalizationBackward,                                                                 \
    (H, int, CP, CP, CP, CP, D, CP, D, CP, D, P, D, CP, P, P, double, CP, CP))

#define GC_DECLARE(ret, name, args) static ret(*p_##name) args;
GC_DNN_FUNCS(GC_DECLARE)
GC_DNN_OPTIONAL_FUNCS(GC_DECLARE)

static int loaded;

int gc_dnn_load(char *err, int errlen) {
  if (loaded) return 0;
  const char *names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
  }
  if (lib == NULL) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "libcudnn.so.9 not found");
    return -1;
  }
#define GC_LOAD(ret, name, args)                                  \
  p_##name = (ret(*) args)dlsym(lib, #name);                      \
  if (p_##name == NULL) {                                         \
    snprintf(err, errlen, "cuDNN has no %s (cuDNN 8 or 9 needed)", #name); \
    return -1;                                                    \
  }
  GC_DNN_FUNCS(GC_LOAD)
#define GC_LOAD_OPTIONAL(ret, name, args) p_##name = (ret(*) args)dlsym(lib, #name);
  GC_DNN_OPTIONAL_FUNCS(GC_LOAD_OPTIONAL)
  loaded = 1;
  return 0;
}

size_t gc_dnn_version(void) { return loaded ? p_cudnnGetVersion() : 0; }

const char *gc_dnn_error_string(int s) {
  if (s == -1000) return "cuDNN is not loaded";
  return loaded ? p_cudnnGetErrorString(s) : "cuDNN is not loaded";
}

// CTX makes c current (see gocaffe_cuda.c's WITH_CTX_BLAS).
#define CTX(c)                                  \
  do {                                          \
    if (!loaded) return -1000;                  \
    CUresult r_ = cuCtxSetCurrent(c);           \
    if (r_ != CUDA_SUCCESS) return -(int)r_;    \
  } while (0)

int gc_dnn_create(CUcontext c, gc_dnn_t *h, CUstream s) {
  CTX(c);
  int r = p_cudnnCreate(h);
  if (r != 0) return r;
  return p_cudnnSetStream(*h, s);
}

int gc_dnn_destroy(CUcontext c, gc_dnn_t h) {
  CTX(c);
  return p_cudnnDestroy(h);
}

int gc_dnn_desc_create(int kind, gc_dnn_desc_t *d) {
  if (!loaded) return -1000;
  switch (kind) {
    case 0: return p_cudnnCreateTensorDescriptor(d);
    case 1: return p_cudnnCreateFilterDescriptor(d);
    case 2: return p_cudnnCreateConvolutionDescriptor(d);
    case 3: return p_cudnnCreatePoolingDescriptor(d);
    case 4: return p_cudnnCreateActivationDescriptor(d);
    case 5: return p_cudnnCreateLRNDescriptor(d);
  }
  return 3;  // CUDNN_STATUS_BAD_PARAM
}

int gc_dnn_desc_destroy(int kind, gc_dnn_desc_t d) {
  if (!loaded) return -1000;
  switch (kind) {
    case 0: return p_cudnnDestroyTensorDescriptor(d);
    case 1: return p_cudnnDestroyFilterDescriptor(d);
    case 2: return p_cudnnDestroyConvolutionDescriptor(d);
    case 3: return p_cudnnDestroyPoolingDescriptor(d);
    case 4: return p_cudnnDestroyActivationDescriptor(d);
    case 5: return p_cudnnDestroyLRNDescriptor(d);
  }
  return 3;
}

int gc_dnn_set_tensor(gc_dnn_desc_t d, int dtype, int nbdims, const int *dims, const int *strides) {
  return p_cudnnSetTensorNdDescriptor(d, dtype, nbdims, dims, strides);
}

int gc_dnn_set_filter(gc_dnn_desc_t d, int dtype, int format, int nbdims, const int *dims) {
  return p_cudnnSetFilterNdDescriptor(d, dtype, format, nbdims, dims);
}

int gc_dnn_set_conv(gc_dnn_desc_t d, int nbdims, const int *pads, const int *strides, const int *dilations,
                    int dtype, int groups, int math) {
  int r = p_cudnnSetConvolutionNdDescriptor(d, nbdims, pads, strides, dilations, GC_DNN_CROSS_CORRELATION, dtype);
  if (r != 0) return r;
  if ((r = p_cudnnSetConvolutionGroupCount(d, groups)) != 0) return r;
  return p_cudnnSetConvolutionMathType(d, math);
}

int gc_dnn_set_pooling(gc_dnn_desc_t d, int mode, int nbdims, const int *window, const int *pads, const int *strides) {
  return p_cudnnSetPoolingNdDescriptor(d, mode, GC_DNN_PROPAGATE_NAN, nbdims, window, pads, strides);
}

int gc_dnn_set_activation(gc_dnn_desc_t d, int mode) {
  return p_cudnnSetActivationDescriptor(d, mode, GC_DNN_PROPAGATE_NAN, 0.0);
}

int gc_dnn_set_lrn(gc_dnn_desc_t d, unsigned n, double alpha, double beta, double k) {
  return p_cudnnSetLRNDescriptor(d, n, alpha, beta, k);
}

// heuristics fills perf with cuDNN's heuristic ranking of pass which's
// algorithms (0 forward, 1 data gradient, 2 weight gradient), fastest
// first, and *n with their number.
static int heuristics(gc_dnn_t h, int which, gc_dnn_desc_t x, gc_dnn_desc_t w, gc_dnn_desc_t conv, gc_dnn_desc_t y,
                      gc_perf *perf, int *n) {
  switch (which) {
    case 0: return p_cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 16, n, perf);
    case 1: return p_cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, y, conv, x, 16, n, perf);
    default: return p_cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, y, conv, w, 16, n, perf);
  }
}

int gc_dnn_conv_algo(CUcontext c, gc_dnn_t h, int which, gc_dnn_desc_t x, gc_dnn_desc_t w, gc_dnn_desc_t conv,
                     gc_dnn_desc_t y, size_t max_ws, gc_dnn_algo *out) {
  CTX(c);
  gc_perf perf[16];
  int n = 0, r;
  if ((r = heuristics(h, which, x, w, conv, y, perf, &n)) != 0) return r;
  for (int i = 0; i < n; i++) {
    if (perf[i].status == 0 && perf[i].memory <= max_ws) {
      out->algo = perf[i].algo;
      out->memory = perf[i].memory;
      return 0;
    }
  }
  return 9;  // CUDNN_STATUS_NOT_SUPPORTED: nothing fits the workspace
}

int gc_dnn_conv_algo_policy(CUcontext c, gc_dnn_t h, int which, int policy, gc_dnn_desc_t x, gc_dnn_desc_t w,
                            gc_dnn_desc_t conv, gc_dnn_desc_t y, size_t max_ws, gc_dnn_algo *out) {
  CTX(c);
  gc_perf perf[16];
  int n = 0, r;
  if ((r = heuristics(h, which, x, w, conv, y, perf, &n)) != 0) return r;
  out->algo = -1;
  out->memory = 0;
  for (int i = 0; i < n; i++) {
    if (perf[i].status != 0 || perf[i].memory > max_ws) continue;
    if (policy == 2) {
      if (perf[i].memory > out->memory) out->memory = perf[i].memory;
      continue;
    }
    if (perf[i].determinism != 1) continue;  // CUDNN_DETERMINISTIC
    out->algo = perf[i].algo;
    out->memory = perf[i].memory;
    return 0;
  }
  return policy == 2 ? 0 : 9;  // CUDNN_STATUS_NOT_SUPPORTED: nothing fits
}

// pick_algo takes the first (fastest) of n results that succeeded, fits
// max_ws and, unless tf32, runs without tensor-core math.
static int pick_algo(gc_perf *perf, int n, size_t max_ws, int tf32, gc_dnn_algo *out) {
  for (int i = 0; i < n; i++) {
    if (perf[i].status != 0 || perf[i].memory > max_ws) continue;
    if (!tf32 && (perf[i].math == GC_DNN_TENSOR_OP_MATH || perf[i].math == 2)) continue;
    out->algo = perf[i].algo;
    out->memory = perf[i].memory;
    return 0;
  }
  return 9;  // CUDNN_STATUS_NOT_SUPPORTED: nothing fits
}

// find_once runs cuDNN's Find of one pass once.
static int find_once(gc_dnn_t h, int which, gc_dnn_desc_t xd, void *xp, gc_dnn_desc_t wd, void *wp,
                     gc_dnn_desc_t conv, gc_dnn_desc_t yd, void *yp, void *wsp, size_t wsbytes, gc_perf *perf,
                     int *n) {
  switch (which) {
    case 0: return p_cudnnFindConvolutionForwardAlgorithmEx(h, xd, xp, wd, wp, conv, yd, yp, 16, n, perf, wsp, wsbytes);
    case 1: return p_cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd, wp, yd, yp, conv, xd, xp, 16, n, perf, wsp, wsbytes);
    default: return p_cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd, xp, yd, yp, conv, wd, wp, 16, n, perf, wsp, wsbytes);
  }
}

// keep_fastest merges one Find's results into best (nb of them): each
// algorithm and math mode keeps its least time over the rounds.
static void keep_fastest(gc_perf *best, int *nb, const gc_perf *perf, int n) {
  for (int i = 0; i < n; i++) {
    if (perf[i].status != 0) continue;
    int j = 0;
    while (j < *nb && !(best[j].algo == perf[i].algo && best[j].math == perf[i].math)) j++;
    if (j == *nb) {
      if (*nb == 16) continue;
      best[(*nb)++] = perf[i];
    } else if (perf[i].time < best[j].time) {
      best[j].time = perf[i].time;
    }
  }
  for (int i = 1; i < *nb; i++) {  // by time, as Find returns them
    gc_perf p = best[i];
    int j = i;
    for (; j > 0 && best[j - 1].time > p.time; j--) best[j] = best[j - 1];
    best[j] = p;
  }
}

// FIND_ROUNDS and FIND_SHORT_MS: a pass whose fastest algorithm took less
// than FIND_SHORT_MS is timed FIND_ROUNDS times, each algorithm by its
// least time. One round of a short convolution's Find is noisy enough that
// two processes of the same net kept different algorithms (CIFAR-10
// quick's iteration rate on an H100 moved by 15% from run to run, and a
// data-parallel job runs at its slowest rank's); a long one's is not, and
// its rounds would cost seconds.
#define FIND_ROUNDS 3
#define FIND_SHORT_MS 1.0f

int gc_dnn_conv_find(CUcontext c, gc_dnn_t h, int which, int tf32, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t wd,
                     CUdeviceptr w, gc_dnn_desc_t conv, gc_dnn_desc_t yd, CUdeviceptr y, CUdeviceptr ws,
                     size_t wsbytes, gc_dnn_algo *out) {
  CTX(c);
  gc_perf perf[16], best[16];
  int n = 0, nb = 0, r;
  void *xp = (void *)(uintptr_t)x, *wp = (void *)(uintptr_t)w, *yp = (void *)(uintptr_t)y, *wsp = (void *)(uintptr_t)ws;
  for (int round = 0; round < FIND_ROUNDS; round++) {
    if ((r = find_once(h, which, xd, xp, wd, wp, conv, yd, yp, wsp, wsbytes, perf, &n)) != 0) return r;
    keep_fastest(best, &nb, perf, n);
    if (nb == 0 || best[0].time >= FIND_SHORT_MS) break;
  }
  return pick_algo(best, nb, wsbytes, tf32, out);
}

// ALPHA_BETA declares the scalars in the type cuDNN reads for the data.
#define ALPHA_BETA(dbl, alpha, beta)                       \
  float fa_ = (float)(alpha), fb_ = (float)(beta);         \
  double da_ = (alpha), db_ = (beta);                      \
  const void *a_ = (dbl) ? (const void *)&da_ : (const void *)&fa_; \
  const void *b_ = (dbl) ? (const void *)&db_ : (const void *)&fb_;

#define DP(p) ((void *)(uintptr_t)(p))

int gc_dnn_conv_forward(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t xd, CUdeviceptr x,
                        gc_dnn_desc_t wd, CUdeviceptr w, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                        size_t wsbytes, double beta, gc_dnn_desc_t yd, CUdeviceptr y) {
  CTX(c);
  ALPHA_BETA(dbl, alpha, beta);
  return p_cudnnConvolutionForward(h, a_, xd, DP(x), wd, DP(w), conv, algo, DP(ws), wsbytes, b_, yd, DP(y));
}

int gc_dnn_conv_backward_data(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t wd, CUdeviceptr w,
                              gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                              size_t wsbytes, double beta, gc_dnn_desc_t dxd, CUdeviceptr dx) {
  CTX(c);
  ALPHA_BETA(dbl, alpha, beta);
  return p_cudnnConvolutionBackwardData(h, a_, wd, DP(w), dyd, DP(dy), conv, algo, DP(ws), wsbytes, b_, dxd, DP(dx));
}

int gc_dnn_conv_backward_filter(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t xd, CUdeviceptr x,
                                gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                                size_t wsbytes, double beta, gc_dnn_desc_t dwd, CUdeviceptr dw) {
  CTX(c);
  ALPHA_BETA(dbl, alpha, beta);
  return p_cudnnConvolutionBackwardFilter(h, a_, xd, DP(x), dyd, DP(dy), conv, algo, DP(ws), wsbytes, b_, dwd, DP(dw));
}

int gc_dnn_conv_backward_bias(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t dyd, CUdeviceptr dy,
                              double beta, gc_dnn_desc_t dbd, CUdeviceptr db) {
  CTX(c);
  ALPHA_BETA(dbl, alpha, beta);
  return p_cudnnConvolutionBackwardBias(h, a_, dyd, DP(dy), b_, dbd, DP(db));
}

int gc_dnn_add_tensor(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t ad, CUdeviceptr a,
                      double beta, gc_dnn_desc_t cd, CUdeviceptr cp) {
  CTX(c);
  ALPHA_BETA(dbl, alpha, beta);
  return p_cudnnAddTensor(h, a_, ad, DP(a), b_, cd, DP(cp));
}

int gc_dnn_pool_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t pd, gc_dnn_desc_t xd, CUdeviceptr x,
                        gc_dnn_desc_t yd, CUdeviceptr y) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnPoolingForward(h, pd, a_, xd, DP(x), b_, yd, DP(y));
}

int gc_dnn_pool_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t pd, gc_dnn_desc_t yd, CUdeviceptr y,
                         gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                         CUdeviceptr dx) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnPoolingBackward(h, pd, a_, yd, DP(y), dyd, DP(dy), xd, DP(x), b_, dxd, DP(dx));
}

int gc_dnn_act_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ad, gc_dnn_desc_t xd, CUdeviceptr x,
                       gc_dnn_desc_t yd, CUdeviceptr y) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnActivationForward(h, ad, a_, xd, DP(x), b_, yd, DP(y));
}

int gc_dnn_act_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ad, gc_dnn_desc_t yd, CUdeviceptr y,
                        gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                        CUdeviceptr dx) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnActivationBackward(h, ad, a_, yd, DP(y), dyd, DP(dy), xd, DP(x), b_, dxd, DP(dx));
}

int gc_dnn_softmax_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t yd,
                           CUdeviceptr y) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnSoftmaxForward(h, GC_DNN_SOFTMAX_ACCURATE, GC_DNN_SOFTMAX_CHANNEL, a_, xd, DP(x), b_, yd, DP(y));
}

int gc_dnn_softmax_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t yd, CUdeviceptr y, gc_dnn_desc_t dyd,
                            CUdeviceptr dy, gc_dnn_desc_t dxd, CUdeviceptr dx) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnSoftmaxBackward(h, GC_DNN_SOFTMAX_ACCURATE, GC_DNN_SOFTMAX_CHANNEL, a_, yd, DP(y), dyd, DP(dy), b_, dxd,
                                DP(dx));
}

int gc_dnn_lrn_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ld, gc_dnn_desc_t xd, CUdeviceptr x,
                       gc_dnn_desc_t yd, CUdeviceptr y) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnLRNCrossChannelForward(h, ld, GC_DNN_LRN_CROSS_CHANNEL, a_, xd, DP(x), b_, yd, DP(y));
}

int gc_dnn_lrn_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ld, gc_dnn_desc_t yd, CUdeviceptr y,
                        gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                        CUdeviceptr dx) {
  CTX(c);
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnLRNCrossChannelBackward(h, ld, GC_DNN_LRN_CROSS_CHANNEL, a_, yd, DP(y), dyd, DP(dy), xd, DP(x), b_, dxd,
                                        DP(dx));
}

int gc_dnn_bn_available(void) {
  return loaded && p_cudnnBatchNormalizationForwardTraining != NULL && p_cudnnBatchNormalizationBackward != NULL;
}

double gc_dnn_bn_min_epsilon(void) {
#if defined(GC_HAVE_CUDNN_H) && defined(CUDNN_BN_MIN_EPSILON)
  return CUDNN_BN_MIN_EPSILON;
#else
  return 1e-5;  // cuDNN 7's value, the largest any version has used
#endif
}

int gc_dnn_bn_forward_training(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t yd,
                               CUdeviceptr y, gc_dnn_desc_t bnd, CUdeviceptr ones, CUdeviceptr zeros,
                               CUdeviceptr run_mean, CUdeviceptr run_var, double eps, CUdeviceptr save_mean,
                               CUdeviceptr save_invstd) {
  CTX(c);
  if (!gc_dnn_bn_available()) return -1000;
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnBatchNormalizationForwardTraining(h, GC_DNN_BN_SPATIAL, a_, b_, xd, DP(x), yd, DP(y), bnd, DP(ones),
                                                  DP(zeros), 1.0, DP(run_mean), DP(run_var), eps, DP(save_mean),
                                                  DP(save_invstd));
}

int gc_dnn_bn_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dyd,
                       CUdeviceptr dy, gc_dnn_desc_t dxd, CUdeviceptr dx, gc_dnn_desc_t bnd, CUdeviceptr ones,
                       CUdeviceptr dscale, CUdeviceptr dbias, double eps, CUdeviceptr save_mean,
                       CUdeviceptr save_invstd) {
  CTX(c);
  if (!gc_dnn_bn_available()) return -1000;
  ALPHA_BETA(dbl, 1.0, 0.0);
  return p_cudnnBatchNormalizationBackward(h, GC_DNN_BN_SPATIAL, a_, b_, a_, b_, xd, DP(x), dyd, DP(dy), dxd, DP(dx),
                                           bnd, DP(ones), DP(dscale), DP(dbias), eps, DP(save_mean),
                                           DP(save_invstd));
}
