//go:build cuda

// cuDNN's graph (backend) API for one convolution pass: an operation graph
// of one convolution, the engine configurations cuDNN's heuristics rank
// for it, and an execution plan for each configuration that finalizes.
// The legacy calls (cudnnConvolutionForward and its Find) reach only the
// eight algorithms of cuDNN 7's enum; on the H100 the graph API's engines
// run ResNet-50's 16-bit 3x3 convolutions about twice as fast.

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gocaffe_cudnn.h"

// The enum values of cudnn_graph.h this file passes, held to the header
// where it is installed.
enum {
  GB_TYPE_HANDLE = 0,
  GB_TYPE_DATA_TYPE = 1,
  GB_TYPE_INT64 = 3,
  GB_TYPE_FLOAT = 4,
  GB_TYPE_DOUBLE = 5,
  GB_TYPE_VOID_PTR = 6,
  GB_TYPE_CONVOLUTION_MODE = 7,
  GB_TYPE_HEUR_MODE = 8,
  GB_TYPE_NUMERICAL_NOTE = 11,
  GB_TYPE_BACKEND_DESCRIPTOR = 15,
  GB_TYPE_BEHAVIOR_NOTE = 19,

  GB_CONVOLUTION_DESCRIPTOR = 1,
  GB_ENGINE_DESCRIPTOR = 2,
  GB_ENGINECFG_DESCRIPTOR = 3,
  GB_ENGINEHEUR_DESCRIPTOR = 4,
  GB_EXECUTION_PLAN_DESCRIPTOR = 5,
  GB_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10,
  GB_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR = 11,
  GB_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR = 12,
  GB_OPERATIONGRAPH_DESCRIPTOR = 15,
  GB_VARIANT_PACK_DESCRIPTOR = 16,
  GB_TENSOR_DESCRIPTOR = 17,

  GB_ATTR_CONVOLUTION_COMP_TYPE = 100,
  GB_ATTR_CONVOLUTION_CONV_MODE = 101,
  GB_ATTR_CONVOLUTION_DILATIONS = 102,
  GB_ATTR_CONVOLUTION_FILTER_STRIDES = 103,
  GB_ATTR_CONVOLUTION_POST_PADDINGS = 104,
  GB_ATTR_CONVOLUTION_PRE_PADDINGS = 105,
  GB_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,
  GB_ATTR_ENGINEHEUR_MODE = 200,
  GB_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
  GB_ATTR_ENGINEHEUR_RESULTS = 202,
  GB_ATTR_ENGINECFG_ENGINE = 300,
  GB_ATTR_EXECUTION_PLAN_HANDLE = 400,
  GB_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
  GB_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
  GB_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700,  // then BETA, CONV_DESC, W, X, Y
  GB_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA = 706,  // then BETA, CONV_DESC, W, DX, DY
  GB_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA = 712,  // then BETA, CONV_DESC, DW, X, DY
  GB_ATTR_OPERATIONGRAPH_HANDLE = 800,
  GB_ATTR_OPERATIONGRAPH_OPS = 801,
  GB_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
  GB_ATTR_TENSOR_DATA_TYPE = 901,
  GB_ATTR_TENSOR_DIMENSIONS = 902,
  GB_ATTR_TENSOR_STRIDES = 903,
  GB_ATTR_TENSOR_UNIQUE_ID = 906,
  GB_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
  GB_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
  GB_ATTR_VARIANT_PACK_WORKSPACE = 1003,
  GB_ATTR_ENGINE_GLOBAL_INDEX = 1301,
  GB_ATTR_ENGINE_NUMERICAL_NOTE = 1303,
  GB_ATTR_ENGINE_BEHAVIOR_NOTE = 1305,

  GB_HEUR_MODE_A = 3,
  GB_NOTE_TENSOR_CORE = 0,
  GB_NOTE_DOWN_CONVERT_INPUTS = 1,
  GB_NOTE_REDUCED_PRECISION_REDUCTION = 2,
  GB_NOTE_NONDETERMINISTIC = 4,
  GB_BEHAVIOR_RUNTIME_COMPILATION = 0,
};

#if defined(__has_include)
#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define GB_SAME(theirs, ours) _Static_assert((int)(theirs) == (int)(ours), #theirs)
GB_SAME(CUDNN_TYPE_BACKEND_DESCRIPTOR, GB_TYPE_BACKEND_DESCRIPTOR);
GB_SAME(CUDNN_TYPE_BEHAVIOR_NOTE, GB_TYPE_BEHAVIOR_NOTE);
GB_SAME(CUDNN_TYPE_NUMERICAL_NOTE, GB_TYPE_NUMERICAL_NOTE);
GB_SAME(CUDNN_TYPE_HEUR_MODE, GB_TYPE_HEUR_MODE);
GB_SAME(CUDNN_BACKEND_TENSOR_DESCRIPTOR, GB_TENSOR_DESCRIPTOR);
GB_SAME(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, GB_VARIANT_PACK_DESCRIPTOR);
GB_SAME(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, GB_OPERATIONGRAPH_DESCRIPTOR);
GB_SAME(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, GB_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
GB_SAME(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, GB_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
GB_SAME(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, GB_EXECUTION_PLAN_DESCRIPTOR);
GB_SAME(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, GB_ATTR_CONVOLUTION_SPATIAL_DIMS);
GB_SAME(CUDNN_ATTR_ENGINEHEUR_RESULTS, GB_ATTR_ENGINEHEUR_RESULTS);
GB_SAME(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, GB_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
GB_SAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, GB_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA + 5);
GB_SAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, GB_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA + 5);
GB_SAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, GB_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA + 5);
GB_SAME(CUDNN_ATTR_OPERATIONGRAPH_OPS, GB_ATTR_OPERATIONGRAPH_OPS);
GB_SAME(CUDNN_ATTR_TENSOR_UNIQUE_ID, GB_ATTR_TENSOR_UNIQUE_ID);
GB_SAME(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, GB_ATTR_VARIANT_PACK_WORKSPACE);
GB_SAME(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, GB_ATTR_ENGINE_BEHAVIOR_NOTE);
GB_SAME(CUDNN_HEUR_MODE_A, GB_HEUR_MODE_A);
GB_SAME(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, GB_NOTE_NONDETERMINISTIC);
GB_SAME(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION, GB_BEHAVIOR_RUNTIME_COMPILATION);
#endif
#endif

typedef void *D;

// CTX_DNN makes c current, as gocaffe_cudnn.c's CTX.
#define CTX_DNN(c)                           \
  do {                                       \
    CUresult r_ = cuCtxSetCurrent(c);        \
    if (r_ != CUDA_SUCCESS) return -(int)r_; \
  } while (0)

static int (*p_create)(int, D *);
static int (*p_destroy)(D);
static int (*p_finalize)(D);
static int (*p_set)(D, int, int, int64_t, const void *);
static int (*p_get)(D, int, int, int64_t, int64_t *, void *);
static int (*p_execute)(gc_dnn_t, D, D);
static int graph_loaded;

// load_graph looks up the graph API's entry points in the loaded libcudnn
// (cuDNN 8 and 9 have them; gc_dnn_load opened the library globally).
static int load_graph(void) {
  if (graph_loaded) return graph_loaded > 0 ? 0 : 9;
  void *lib = dlopen(NULL, RTLD_NOW);
  p_create = (int (*)(int, D *))dlsym(lib, "cudnnBackendCreateDescriptor");
  p_destroy = (int (*)(D))dlsym(lib, "cudnnBackendDestroyDescriptor");
  p_finalize = (int (*)(D))dlsym(lib, "cudnnBackendFinalize");
  p_set = (int (*)(D, int, int, int64_t, const void *))dlsym(lib, "cudnnBackendSetAttribute");
  p_get = (int (*)(D, int, int, int64_t, int64_t *, void *))dlsym(lib, "cudnnBackendGetAttribute");
  p_execute = (int (*)(gc_dnn_t, D, D))dlsym(lib, "cudnnBackendExecute");
  graph_loaded = (p_create && p_destroy && p_finalize && p_set && p_get && p_execute) ? 1 : -1;
  return graph_loaded > 0 ? 0 : 9;  // CUDNN_STATUS_NOT_SUPPORTED
}

// The graph of one pass and its candidate plans.
struct gc_dnn_graph {
  D tensors[3], conv, op, graph;
  int n;  // plans
  D plans[GC_DNN_GRAPH_MAX_PLANS];
  int64_t workspace[GC_DNN_GRAPH_MAX_PLANS], engine[GC_DNN_GRAPH_MAX_PLANS];
  D pack;  // the last variant pack built, for pack_ptrs
  void *pack_ptrs[4];
  int pack_plan;
};

#define TRY(call)              \
  do {                         \
    int r_ = (call);           \
    if (r_ != 0) return r_;    \
  } while (0)

static int make_tensor(D *t, int64_t uid, int dtype, int nd, const int64_t *dims, const int64_t *strides,
                       int64_t align) {
  TRY(p_create(GB_TENSOR_DESCRIPTOR, t));
  TRY(p_set(*t, GB_ATTR_TENSOR_DATA_TYPE, GB_TYPE_DATA_TYPE, 1, &dtype));
  TRY(p_set(*t, GB_ATTR_TENSOR_DIMENSIONS, GB_TYPE_INT64, nd, dims));
  TRY(p_set(*t, GB_ATTR_TENSOR_STRIDES, GB_TYPE_INT64, nd, strides));
  TRY(p_set(*t, GB_ATTR_TENSOR_UNIQUE_ID, GB_TYPE_INT64, 1, &uid));
  TRY(p_set(*t, GB_ATTR_TENSOR_BYTE_ALIGNMENT, GB_TYPE_INT64, 1, &align));
  return p_finalize(*t);
}

static int make_conv(D *c, int ctype, int nspatial, const int64_t *pads, const int64_t *strides,
                     const int64_t *dilations) {
  int mode = GC_DNN_CROSS_CORRELATION;
  int64_t ns = nspatial;
  TRY(p_create(GB_CONVOLUTION_DESCRIPTOR, c));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_COMP_TYPE, GB_TYPE_DATA_TYPE, 1, &ctype));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_CONV_MODE, GB_TYPE_CONVOLUTION_MODE, 1, &mode));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_SPATIAL_DIMS, GB_TYPE_INT64, 1, &ns));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_DILATIONS, GB_TYPE_INT64, nspatial, dilations));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_FILTER_STRIDES, GB_TYPE_INT64, nspatial, strides));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_PRE_PADDINGS, GB_TYPE_INT64, nspatial, pads));
  TRY(p_set(*c, GB_ATTR_CONVOLUTION_POST_PADDINGS, GB_TYPE_INT64, nspatial, pads));
  return p_finalize(*c);
}

// make_op builds pass which's operation on the tensors x, w, y (as roles:
// forward x, w -> y; data gradient w, dy=y -> dx=x; weight gradient x,
// dy=y -> dw=w).
static int make_op(struct gc_dnn_graph *g, int which, int dbl, double alpha, double beta) {
  static const int kinds[3] = {GB_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                               GB_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                               GB_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
  static const int first[3] = {GB_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, GB_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                               GB_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA};
  int a = first[which];
  TRY(p_create(kinds[which], &g->op));
  float fa = (float)alpha, fb = (float)beta;
  if (dbl) {
    TRY(p_set(g->op, a, GB_TYPE_DOUBLE, 1, &alpha));
    TRY(p_set(g->op, a + 1, GB_TYPE_DOUBLE, 1, &beta));
  } else {
    TRY(p_set(g->op, a, GB_TYPE_FLOAT, 1, &fa));
    TRY(p_set(g->op, a + 1, GB_TYPE_FLOAT, 1, &fb));
  }
  TRY(p_set(g->op, a + 2, GB_TYPE_BACKEND_DESCRIPTOR, 1, &g->conv));
  // The three operations list their tensors alike: weights (W, W, DW),
  // then the input side (X, DX, X), then the output side (Y, DY, DY).
  for (int k = 0; k < 3; k++) {
    static const int role[3] = {1, 0, 2};  // tensors[] index of W, X and Y
    TRY(p_set(g->op, a + 3 + k, GB_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensors[role[k]]));
  }
  return p_finalize(g->op);
}

// wanted says whether an engine's notes allow it: never one that converts
// its inputs down or sums in reduced precision (gocaffe promises FP32
// sums), nor one compiled at run time (seconds per shape); tensor cores
// only where allowed (TF32 or 16-bit data); nondeterministic ones only
// where allowed.
static int wanted(D cfg, int allow_tc, int allow_nondet, int64_t *index) {
  D engine = NULL;
  int64_t n = 0;
  int notes[32], ok = 1;
  if (p_create(GB_ENGINE_DESCRIPTOR, &engine) != 0) return 0;
  if (p_get(cfg, GB_ATTR_ENGINECFG_ENGINE, GB_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) != 0) {
    p_destroy(engine);
    return 0;
  }
  if (p_get(engine, GB_ATTR_ENGINE_GLOBAL_INDEX, GB_TYPE_INT64, 1, &n, index) != 0) *index = -1;
  if (p_get(engine, GB_ATTR_ENGINE_NUMERICAL_NOTE, GB_TYPE_NUMERICAL_NOTE, 32, &n, notes) == 0) {
    for (int64_t i = 0; i < n && i < 32; i++) {
      int v = notes[i];
      if (v == GB_NOTE_DOWN_CONVERT_INPUTS || v == GB_NOTE_REDUCED_PRECISION_REDUCTION) ok = 0;
      if (v == GB_NOTE_TENSOR_CORE && !allow_tc) ok = 0;
      if (v == GB_NOTE_NONDETERMINISTIC && !allow_nondet) ok = 0;
    }
  }
  if (p_get(engine, GB_ATTR_ENGINE_BEHAVIOR_NOTE, GB_TYPE_BEHAVIOR_NOTE, 32, &n, notes) == 0) {
    for (int64_t i = 0; i < n && i < 32; i++) {
      if (notes[i] == GB_BEHAVIOR_RUNTIME_COMPILATION) ok = 0;
    }
  }
  p_destroy(engine);
  return ok;
}

// add_plans asks the heuristics for g's engine configurations and keeps a
// plan for each wanted one that finalizes within max_ws, in their order.
static int add_plans(struct gc_dnn_graph *g, gc_dnn_t h, int allow_tc, int allow_nondet, int64_t max_ws) {
  D heur = NULL;
  int mode = GB_HEUR_MODE_A;
  int r;
  TRY(p_create(GB_ENGINEHEUR_DESCRIPTOR, &heur));
  if ((r = p_set(heur, GB_ATTR_ENGINEHEUR_OPERATION_GRAPH, GB_TYPE_BACKEND_DESCRIPTOR, 1, &g->graph)) != 0 ||
      (r = p_set(heur, GB_ATTR_ENGINEHEUR_MODE, GB_TYPE_HEUR_MODE, 1, &mode)) != 0 || (r = p_finalize(heur)) != 0) {
    p_destroy(heur);
    return r;
  }
  int64_t count = 0;
  if ((r = p_get(heur, GB_ATTR_ENGINEHEUR_RESULTS, GB_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL)) != 0) {
    p_destroy(heur);
    return r;
  }
  if (count > 64) count = 64;
  D cfgs[64];
  int64_t made = 0;
  for (; made < count; made++) {
    if (p_create(GB_ENGINECFG_DESCRIPTOR, &cfgs[made]) != 0) break;
  }
  int64_t got = 0;
  r = p_get(heur, GB_ATTR_ENGINEHEUR_RESULTS, GB_TYPE_BACKEND_DESCRIPTOR, made, &got, cfgs);
  for (int64_t i = 0; r == 0 && i < got && i < made && g->n < GC_DNN_GRAPH_MAX_PLANS; i++) {
    int64_t index = -1, ws = 0, nws = 0;
    if (!wanted(cfgs[i], allow_tc, allow_nondet, &index)) continue;
    D plan = NULL;
    if (p_create(GB_EXECUTION_PLAN_DESCRIPTOR, &plan) != 0) continue;
    if (p_set(plan, GB_ATTR_EXECUTION_PLAN_HANDLE, GB_TYPE_HANDLE, 1, &h) != 0 ||
        p_set(plan, GB_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, GB_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]) != 0 ||
        p_finalize(plan) != 0 || p_get(plan, GB_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, GB_TYPE_INT64, 1, &nws, &ws) != 0 ||
        ws > max_ws) {
      p_destroy(plan);
      continue;
    }
    g->plans[g->n] = plan;
    g->workspace[g->n] = ws;
    g->engine[g->n] = index;
    g->n++;
  }
  for (int64_t i = 0; i < made; i++) p_destroy(cfgs[i]);
  p_destroy(heur);
  return r;
}

void gc_dnn_graph_destroy(struct gc_dnn_graph *g) {
  if (g == NULL) return;
  if (graph_loaded > 0) {
    for (int i = 0; i < g->n; i++) p_destroy(g->plans[i]);
    D ds[] = {g->pack, g->graph, g->op, g->conv, g->tensors[0], g->tensors[1], g->tensors[2]};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
      if (ds[i] != NULL) p_destroy(ds[i]);
    }
  }
  free(g);
}

int gc_dnn_graph_conv(CUcontext c, gc_dnn_t h, int which, int dtype, int ctype, int nd, const int64_t *xdims,
                      const int64_t *xstrides, const int64_t *wdims, const int64_t *wstrides, const int64_t *ydims,
                      const int64_t *ystrides, const int64_t *pads, const int64_t *cstrides, const int64_t *dilations,
                      int64_t align, double alpha, double beta, int allow_tc, int allow_nondet, int64_t max_ws,
                      struct gc_dnn_graph **out) {
  CTX_DNN(c);
  *out = NULL;
  TRY(load_graph());
  struct gc_dnn_graph *g = calloc(1, sizeof *g);
  if (g == NULL) return 2;  // CUDNN_STATUS_ALLOC_FAILED
  int dbl = dtype == GC_DNN_DOUBLE;
  int r = make_tensor(&g->tensors[0], 1, dtype, nd, xdims, xstrides, align);
  if (r == 0) r = make_tensor(&g->tensors[1], 2, dtype, nd, wdims, wstrides, align);
  if (r == 0) r = make_tensor(&g->tensors[2], 3, dtype, nd, ydims, ystrides, align);
  if (r == 0) r = make_conv(&g->conv, ctype, nd - 2, pads, cstrides, dilations);
  if (r == 0) r = make_op(g, which, dbl, alpha, beta);
  if (r == 0) r = p_create(GB_OPERATIONGRAPH_DESCRIPTOR, &g->graph);
  if (r == 0) r = p_set(g->graph, GB_ATTR_OPERATIONGRAPH_OPS, GB_TYPE_BACKEND_DESCRIPTOR, 1, &g->op);
  if (r == 0) r = p_set(g->graph, GB_ATTR_OPERATIONGRAPH_HANDLE, GB_TYPE_HANDLE, 1, &h);
  if (r == 0) r = p_finalize(g->graph);
  if (r == 0) r = add_plans(g, h, allow_tc, allow_nondet, max_ws);
  if (r != 0 || g->n == 0) {
    gc_dnn_graph_destroy(g);
    return r != 0 ? r : 9;  // CUDNN_STATUS_NOT_SUPPORTED: no engine
  }
  g->pack_plan = -1;
  *out = g;
  return 0;
}

int gc_dnn_graph_plans(struct gc_dnn_graph *g) { return g->n; }
int64_t gc_dnn_graph_workspace(struct gc_dnn_graph *g, int i) { return g->workspace[i]; }
int64_t gc_dnn_graph_engine(struct gc_dnn_graph *g, int i) { return g->engine[i]; }

void gc_dnn_graph_keep(struct gc_dnn_graph *g, int i) {
  D keep = g->plans[i];
  int64_t ws = g->workspace[i], engine = g->engine[i];
  for (int j = 0; j < g->n; j++) {
    if (j != i) p_destroy(g->plans[j]);
  }
  g->plans[0] = keep;
  g->workspace[0] = ws;
  g->engine[0] = engine;
  g->n = 1;
  if (g->pack != NULL) {
    p_destroy(g->pack);
    g->pack = NULL;
  }
  g->pack_plan = -1;
}

// pack returns the variant pack of the pointers, reusing the last one
// built where they are the same (a layer's pass sees the same memory in
// every iteration).
static int pack(struct gc_dnn_graph *g, int i, void *ptrs[4], D *out) {
  if (g->pack != NULL && g->pack_plan == i && memcmp(g->pack_ptrs, ptrs, sizeof g->pack_ptrs) == 0) {
    *out = g->pack;
    return 0;
  }
  if (g->pack != NULL) {
    p_destroy(g->pack);
    g->pack = NULL;
  }
  static const int64_t uids[3] = {1, 2, 3};
  D p = NULL;
  TRY(p_create(GB_VARIANT_PACK_DESCRIPTOR, &p));
  int r = p_set(p, GB_ATTR_VARIANT_PACK_UNIQUE_IDS, GB_TYPE_INT64, 3, uids);
  if (r == 0) r = p_set(p, GB_ATTR_VARIANT_PACK_DATA_POINTERS, GB_TYPE_VOID_PTR, 3, ptrs);
  if (r == 0) r = p_set(p, GB_ATTR_VARIANT_PACK_WORKSPACE, GB_TYPE_VOID_PTR, 1, &ptrs[3]);
  if (r == 0) r = p_finalize(p);
  if (r != 0) {
    p_destroy(p);
    return r;
  }
  g->pack = p;
  memcpy(g->pack_ptrs, ptrs, sizeof g->pack_ptrs);
  g->pack_plan = i;
  *out = p;
  return 0;
}

int gc_dnn_graph_execute(CUcontext c, gc_dnn_t h, struct gc_dnn_graph *g, int i, CUdeviceptr x, CUdeviceptr w,
                         CUdeviceptr y, CUdeviceptr ws) {
  CTX_DNN(c);
  void *ptrs[4] = {(void *)(uintptr_t)x, (void *)(uintptr_t)w, (void *)(uintptr_t)y, (void *)(uintptr_t)ws};
  D p = NULL;
  TRY(pack(g, i, ptrs, &p));
  return p_execute(h, g->plans[i], p);
}
