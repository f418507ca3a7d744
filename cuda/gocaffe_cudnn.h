// cuDNN for gocaffe's CUDA binding, loaded at run time. The legacy API that
// cuDNN 7 to 9 share is declared here (or taken from cudnn.h where it is
// installed, and then checked against these values), and the library is
// opened with dlopen on first use: building needs no cuDNN, and a machine
// without it runs gocaffe's own kernels.
#ifndef GOCAFFE_CUDNN_H
#define GOCAFFE_CUDNN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

// The values of cuDNN's enums that gocaffe uses.
#define GC_DNN_FLOAT 0                  // CUDNN_DATA_FLOAT
#define GC_DNN_DOUBLE 1                 // CUDNN_DATA_DOUBLE
#define GC_DNN_NCHW 0                   // CUDNN_TENSOR_NCHW
#define GC_DNN_NHWC 1                   // CUDNN_TENSOR_NHWC
#define GC_DNN_CROSS_CORRELATION 1      // CUDNN_CROSS_CORRELATION
#define GC_DNN_DEFAULT_MATH 0           // CUDNN_DEFAULT_MATH
#define GC_DNN_TENSOR_OP_MATH 1         // CUDNN_TENSOR_OP_MATH
#define GC_DNN_FMA_MATH 3               // CUDNN_FMA_MATH
#define GC_DNN_POOL_MAX 0               // CUDNN_POOLING_MAX
#define GC_DNN_POOL_AVE_PAD 1           // CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
#define GC_DNN_NOT_PROPAGATE_NAN 0      // CUDNN_NOT_PROPAGATE_NAN
#define GC_DNN_PROPAGATE_NAN 1          // CUDNN_PROPAGATE_NAN
#define GC_DNN_SIGMOID 0                // CUDNN_ACTIVATION_SIGMOID
#define GC_DNN_RELU 1                   // CUDNN_ACTIVATION_RELU
#define GC_DNN_TANH 2                   // CUDNN_ACTIVATION_TANH
#define GC_DNN_SOFTMAX_ACCURATE 1       // CUDNN_SOFTMAX_ACCURATE
#define GC_DNN_SOFTMAX_CHANNEL 1        // CUDNN_SOFTMAX_MODE_CHANNEL
#define GC_DNN_LRN_CROSS_CHANNEL 0      // CUDNN_LRN_CROSS_CHANNEL_DIM1
#define GC_DNN_BN_SPATIAL 1             // CUDNN_BATCHNORM_SPATIAL

typedef void *gc_dnn_t;       // cudnnHandle_t
typedef void *gc_dnn_desc_t;  // any cudnn*Descriptor_t

// An algorithm found by the heuristics: its number and workspace bytes.
typedef struct {
  int algo;
  size_t memory;
} gc_dnn_algo;

// Every function returns the cuDNN status (0: success), or minus the
// CUresult when the context could not be made current; -1000 when cuDNN
// is not loaded.
int gc_dnn_load(char *err, int errlen);
size_t gc_dnn_version(void);
const char *gc_dnn_error_string(int status);

int gc_dnn_create(CUcontext c, gc_dnn_t *h, CUstream s);
int gc_dnn_destroy(CUcontext c, gc_dnn_t h);

// Descriptors: kind 0 tensor, 1 filter, 2 convolution, 3 pooling,
// 4 activation, 5 LRN.
int gc_dnn_desc_create(int kind, gc_dnn_desc_t *d);
int gc_dnn_desc_destroy(int kind, gc_dnn_desc_t d);
int gc_dnn_set_tensor(gc_dnn_desc_t d, int dtype, int nbdims, const int *dims, const int *strides);
int gc_dnn_set_filter(gc_dnn_desc_t d, int dtype, int format, int nbdims, const int *dims);
int gc_dnn_set_conv(gc_dnn_desc_t d, int nbdims, const int *pads, const int *strides, const int *dilations,
                    int dtype, int groups, int math);
int gc_dnn_set_pooling(gc_dnn_desc_t d, int mode, int nbdims, const int *window, const int *pads, const int *strides);
int gc_dnn_set_activation(gc_dnn_desc_t d, int mode);
int gc_dnn_set_lrn(gc_dnn_desc_t d, unsigned n, double alpha, double beta, double k);

// The fastest algorithm whose workspace fits max_ws, by the _v7
// heuristics: which 0 forward, 1 backward data, 2 backward filter.
int gc_dnn_conv_algo(CUcontext c, gc_dnn_t h, int which, gc_dnn_desc_t x, gc_dnn_desc_t w, gc_dnn_desc_t conv,
                     gc_dnn_desc_t y, size_t max_ws, gc_dnn_algo *out);

// By the same heuristics, for policy 1 the fastest deterministic
// algorithm whose workspace fits max_ws (out->algo), for policy 2 the
// largest workspace of any algorithm that fits max_ws (out->memory; the
// workspace a search of them all needs).
int gc_dnn_conv_algo_policy(CUcontext c, gc_dnn_t h, int which, int policy, gc_dnn_desc_t x, gc_dnn_desc_t w,
                            gc_dnn_desc_t conv, gc_dnn_desc_t y, size_t max_ws, gc_dnn_algo *out);

// The fastest algorithm by running them (cudnnFind*AlgorithmEx) on x, w
// and y, within the workspace ws: which 0 forward (writes y), 1 backward
// data (reads w and y as dy, writes x as dx), 2 backward filter (reads x
// and y as dy, writes w as dw). Tensor-core math only with tf32.
int gc_dnn_conv_find(CUcontext c, gc_dnn_t h, int which, int tf32, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t wd,
                     CUdeviceptr w, gc_dnn_desc_t conv, gc_dnn_desc_t yd, CUdeviceptr y, CUdeviceptr ws,
                     size_t wsbytes, gc_dnn_algo *out);

// The passes. dbl says whether alpha and beta are doubles (double data)
// or floats.
int gc_dnn_conv_forward(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t xd, CUdeviceptr x,
                        gc_dnn_desc_t wd, CUdeviceptr w, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                        size_t wsbytes, double beta, gc_dnn_desc_t yd, CUdeviceptr y);
int gc_dnn_conv_backward_data(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t wd, CUdeviceptr w,
                              gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                              size_t wsbytes, double beta, gc_dnn_desc_t dxd, CUdeviceptr dx);
int gc_dnn_conv_backward_filter(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t xd, CUdeviceptr x,
                                gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t conv, int algo, CUdeviceptr ws,
                                size_t wsbytes, double beta, gc_dnn_desc_t dwd, CUdeviceptr dw);
int gc_dnn_conv_backward_bias(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t dyd, CUdeviceptr dy,
                              double beta, gc_dnn_desc_t dbd, CUdeviceptr db);
int gc_dnn_add_tensor(CUcontext c, gc_dnn_t h, int dbl, double alpha, gc_dnn_desc_t ad, CUdeviceptr a,
                      double beta, gc_dnn_desc_t cd, CUdeviceptr cp);
int gc_dnn_pool_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t pd, gc_dnn_desc_t xd, CUdeviceptr x,
                        gc_dnn_desc_t yd, CUdeviceptr y);
int gc_dnn_pool_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t pd, gc_dnn_desc_t yd, CUdeviceptr y,
                         gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                         CUdeviceptr dx);
int gc_dnn_act_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ad, gc_dnn_desc_t xd, CUdeviceptr x,
                       gc_dnn_desc_t yd, CUdeviceptr y);
int gc_dnn_act_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ad, gc_dnn_desc_t yd, CUdeviceptr y,
                        gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                        CUdeviceptr dx);
int gc_dnn_softmax_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t yd,
                           CUdeviceptr y);
int gc_dnn_softmax_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t yd, CUdeviceptr y, gc_dnn_desc_t dyd,
                            CUdeviceptr dy, gc_dnn_desc_t dxd, CUdeviceptr dx);
int gc_dnn_lrn_forward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ld, gc_dnn_desc_t xd, CUdeviceptr x,
                       gc_dnn_desc_t yd, CUdeviceptr y);
int gc_dnn_lrn_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t ld, gc_dnn_desc_t yd, CUdeviceptr y,
                        gc_dnn_desc_t dyd, CUdeviceptr dy, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dxd,
                        CUdeviceptr dx);

// Batch normalization (CUDNN_BATCHNORM_SPATIAL: statistics per channel over
// the batch and spatial axes), without cuDNN's affine part: the scale is
// ones and the bias zeros (bnd describes them, 1 x C x 1 x 1, in the type
// cuDNN wants for the data). gc_dnn_bn_available says whether the loaded
// cuDNN has these functions (they are optional: nothing else needs them);
// gc_dnn_bn_min_epsilon is the smallest epsilon cuDNN accepts.
int gc_dnn_bn_available(void);
double gc_dnn_bn_min_epsilon(void);
// Training: normalizes x into y with the batch's statistics; run_mean and
// run_var receive the batch's mean and unbiased variance (factor 1), and
// save_mean and save_invstd what the backward pass needs.
int gc_dnn_bn_forward_training(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t yd,
                               CUdeviceptr y, gc_dnn_desc_t bnd, CUdeviceptr ones, CUdeviceptr zeros,
                               CUdeviceptr run_mean, CUdeviceptr run_var, double eps, CUdeviceptr save_mean,
                               CUdeviceptr save_invstd);
// Backward of training: dx from x, dy and the saved statistics; the
// scale's and bias's gradients go to dscale and dbias (scratch).
int gc_dnn_bn_backward(CUcontext c, gc_dnn_t h, int dbl, gc_dnn_desc_t xd, CUdeviceptr x, gc_dnn_desc_t dyd,
                       CUdeviceptr dy, gc_dnn_desc_t dxd, CUdeviceptr dx, gc_dnn_desc_t bnd, CUdeviceptr ones,
                       CUdeviceptr dscale, CUdeviceptr dbias, double eps, CUdeviceptr save_mean,
                       CUdeviceptr save_invstd);

// cuDNN's graph API (gocaffe_cudnn_graph.c): pass which (0 forward, 1 data
// gradient, 2 weight gradient) of one convolution, x, w and y given as
// dims and strides of nd axes (N, C, spatial...; K, C/group, kernel...),
// their pointers aligned to align bytes, alpha and beta fixed in the
// graph; up to GC_DNN_GRAPH_MAX_PLANS plans of the engines cuDNN's
// heuristics rank first whose notes allow them (tensor cores only with
// allow_tc, nondeterministic ones only with allow_nondet; never inputs
// converted down or sums in reduced precision) and whose workspace fits
// max_ws. gc_dnn_graph_execute runs plan i on the pointers (x, w, y in the
// pass's roles: y is dy and x dx as for gc_dnn_conv_find); gc_dnn_graph_keep
// drops every plan but i, which becomes plan 0.
#define GC_DNN_GRAPH_MAX_PLANS 8
struct gc_dnn_graph;
int gc_dnn_graph_conv(CUcontext c, gc_dnn_t h, int which, int dtype, int ctype, int nd, const int64_t *xdims,
                      const int64_t *xstrides, const int64_t *wdims, const int64_t *wstrides, const int64_t *ydims,
                      const int64_t *ystrides, const int64_t *pads, const int64_t *cstrides, const int64_t *dilations,
                      int64_t align, double alpha, double beta, int allow_tc, int allow_nondet, int64_t max_ws,
                      struct gc_dnn_graph **out);
int gc_dnn_graph_plans(struct gc_dnn_graph *g);
int64_t gc_dnn_graph_workspace(struct gc_dnn_graph *g, int i);
int64_t gc_dnn_graph_engine(struct gc_dnn_graph *g, int i);
void gc_dnn_graph_keep(struct gc_dnn_graph *g, int i);
int gc_dnn_graph_execute(CUcontext c, gc_dnn_t h, struct gc_dnn_graph *g, int i, CUdeviceptr x, CUdeviceptr w,
                         CUdeviceptr y, CUdeviceptr ws);
void gc_dnn_graph_destroy(struct gc_dnn_graph *g);

#endif
