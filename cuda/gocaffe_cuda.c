//go:build cuda

#include <stdint.h>
#include <stdlib.h>
#include "gocaffe_cuda.h"

// WITH_CTX makes c current, then returns the result of call.
#define WITH_CTX(c, call)                      \
  do {                                         \
    CUresult r_ = cuCtxSetCurrent(c);          \
    if (r_ != CUDA_SUCCESS) return r_;         \
    return (call);                             \
  } while (0)

// WITH_CTX_BLAS is WITH_CTX for cuBLAS calls (see gocaffe_cuda.h).
#define WITH_CTX_BLAS(c, call)                 \
  do {                                         \
    CUresult r_ = cuCtxSetCurrent(c);          \
    if (r_ != CUDA_SUCCESS) return -(int)r_;   \
    return (int)(call);                        \
  } while (0)

const char *gc_error_name(CUresult r) {
  const char *s = NULL;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) return "CUDA_ERROR_UNKNOWN_CODE";
  return s;
}

const char *gc_error_string(CUresult r) {
  const char *s = NULL;
  if (cuGetErrorString(r, &s) != CUDA_SUCCESS || s == NULL) return "unrecognized error code";
  return s;
}

const char *gc_cublas_status_name(int s) { return cublasGetStatusName((cublasStatus_t)s); }
const char *gc_cublas_status_string(int s) { return cublasGetStatusString((cublasStatus_t)s); }

CUresult gc_init(void) { return cuInit(0); }
CUresult gc_driver_version(int *v) { return cuDriverGetVersion(v); }
CUresult gc_device_count(int *n) { return cuDeviceGetCount(n); }
CUresult gc_device_get(CUdevice *d, int ordinal) { return cuDeviceGet(d, ordinal); }
CUresult gc_device_name(CUdevice d, char *name, int len) { return cuDeviceGetName(name, len, d); }
CUresult gc_device_total_mem(CUdevice d, size_t *bytes) { return cuDeviceTotalMem(bytes, d); }
CUresult gc_device_attr(CUdevice d, int attr, int *v) { return cuDeviceGetAttribute(v, (CUdevice_attribute)attr, d); }
CUresult gc_primary_ctx_retain(CUdevice d, CUcontext *c) { return cuDevicePrimaryCtxRetain(c, d); }
CUresult gc_ctx_synchronize(CUcontext c) { WITH_CTX(c, cuCtxSynchronize()); }
CUresult gc_mem_info(CUcontext c, size_t *free_bytes, size_t *total) { WITH_CTX(c, cuMemGetInfo(free_bytes, total)); }

CUresult gc_mem_alloc(CUcontext c, CUdeviceptr *p, size_t n) { WITH_CTX(c, cuMemAlloc(p, n)); }
CUresult gc_mem_free(CUcontext c, CUdeviceptr p) { WITH_CTX(c, cuMemFree(p)); }
CUresult gc_memset_d8(CUcontext c, CUdeviceptr p, unsigned char v, size_t n) { WITH_CTX(c, cuMemsetD8(p, v, n)); }
CUresult gc_memset_d32_async(CUcontext c, CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
  WITH_CTX(c, cuMemsetD32Async(p, v, n, s));
}
CUresult gc_memcpy_htod(CUcontext c, CUdeviceptr dst, const void *src, size_t n) { WITH_CTX(c, cuMemcpyHtoD(dst, src, n)); }
CUresult gc_memcpy_dtoh(CUcontext c, void *dst, CUdeviceptr src, size_t n) { WITH_CTX(c, cuMemcpyDtoH(dst, src, n)); }
CUresult gc_memcpy_dtod(CUcontext c, CUdeviceptr dst, CUdeviceptr src, size_t n) { WITH_CTX(c, cuMemcpyDtoD(dst, src, n)); }
CUresult gc_memcpy_htod_async(CUcontext c, CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  WITH_CTX(c, cuMemcpyHtoDAsync(dst, src, n, s));
}
CUresult gc_memcpy_dtoh_async(CUcontext c, void *dst, CUdeviceptr src, size_t n, CUstream s) {
  WITH_CTX(c, cuMemcpyDtoHAsync(dst, src, n, s));
}
CUresult gc_memcpy_dtod_async(CUcontext c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  WITH_CTX(c, cuMemcpyDtoDAsync(dst, src, n, s));
}
// Portable: pinned for every context, so a buffer can feed any device.
CUresult gc_host_alloc(CUcontext c, void **p, size_t n) { WITH_CTX(c, cuMemHostAlloc(p, n, CU_MEMHOSTALLOC_PORTABLE)); }
CUresult gc_host_free(CUcontext c, void *p) { WITH_CTX(c, cuMemFreeHost(p)); }

CUresult gc_stream_create(CUcontext c, CUstream *s, unsigned int flags) { WITH_CTX(c, cuStreamCreate(s, flags)); }
CUresult gc_stream_destroy(CUcontext c, CUstream s) { WITH_CTX(c, cuStreamDestroy(s)); }
CUresult gc_stream_synchronize(CUcontext c, CUstream s) { WITH_CTX(c, cuStreamSynchronize(s)); }
CUresult gc_event_create(CUcontext c, CUevent *e, unsigned int flags) { WITH_CTX(c, cuEventCreate(e, flags)); }
CUresult gc_event_destroy(CUcontext c, CUevent e) { WITH_CTX(c, cuEventDestroy(e)); }
CUresult gc_event_record(CUcontext c, CUevent e, CUstream s) { WITH_CTX(c, cuEventRecord(e, s)); }
CUresult gc_stream_wait_event(CUcontext c, CUstream s, CUevent e) { WITH_CTX(c, cuStreamWaitEvent(s, e, 0)); }
// Capture is relaxed: other goroutines (the Data layers' prefetchers) keep
// allocating and copying on their own streams while the compute stream
// records, which the stricter modes forbid on every thread.
CUresult gc_stream_begin_capture(CUcontext c, CUstream s) { WITH_CTX(c, cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED)); }
CUresult gc_stream_end_capture(CUcontext c, CUstream s, CUgraph *g) { WITH_CTX(c, cuStreamEndCapture(s, g)); }
CUresult gc_stream_is_capturing(CUcontext c, CUstream s, int *capturing) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = cuCtxSetCurrent(c);
  if (r == CUDA_SUCCESS) r = cuStreamIsCapturing(s, &st);
  *capturing = st != CU_STREAM_CAPTURE_STATUS_NONE;
  return r;
}
CUresult gc_graph_instantiate(CUcontext c, CUgraphExec *e, CUgraph g, size_t *nodes) {
  CUresult r = cuCtxSetCurrent(c);
  if (r == CUDA_SUCCESS) r = cuGraphGetNodes(g, NULL, nodes);
  if (r == CUDA_SUCCESS) r = cuGraphInstantiateWithFlags(e, g, 0);
  return r;
}
CUresult gc_graph_launch(CUcontext c, CUgraphExec e, CUstream s) { WITH_CTX(c, cuGraphLaunch(e, s)); }
CUresult gc_graph_destroy(CUcontext c, CUgraph g, CUgraphExec e) {
  CUresult r = cuCtxSetCurrent(c), r2 = CUDA_SUCCESS;
  if (r == CUDA_SUCCESS && e != NULL) r = cuGraphExecDestroy(e);
  if (r == CUDA_SUCCESS && g != NULL) r2 = cuGraphDestroy(g);
  return r != CUDA_SUCCESS ? r : r2;
}
CUresult gc_event_synchronize(CUcontext c, CUevent e) { WITH_CTX(c, cuEventSynchronize(e)); }
CUresult gc_event_elapsed(CUcontext c, float *ms, CUevent start, CUevent end) { WITH_CTX(c, cuEventElapsedTime(ms, start, end)); }

CUresult gc_module_load(CUcontext c, CUmodule *m, const void *image) { WITH_CTX(c, cuModuleLoadData(m, image)); }
CUresult gc_module_unload(CUcontext c, CUmodule m) { WITH_CTX(c, cuModuleUnload(m)); }
CUresult gc_module_function(CUcontext c, CUfunction *f, CUmodule m, const char *name) {
  WITH_CTX(c, cuModuleGetFunction(f, m, name));
}

CUresult gc_launch(CUcontext c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                   CUstream s, unsigned long long *slots, int *offsets, int nargs) {
  // Argument i starts at slot offsets[i]; the driver reads as many bytes
  // from there as the kernel's parameter has (little-endian, so 4-byte ints
  // and floats are the low half of their slot) and copies them before
  // returning.
  void *params[GC_MAX_ARGS];
  if (nargs > GC_MAX_ARGS) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < nargs; i++) {
    if (offsets[i] < 0 || offsets[i] >= GC_ARG_SLOTS) return CUDA_ERROR_INVALID_VALUE;
    params[i] = &slots[offsets[i]];
  }
  WITH_CTX(c, cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL));
}

int gc_cublas_create(CUcontext c, cublasHandle_t *h, CUstream s) {
  CUresult r = cuCtxSetCurrent(c);
  if (r != CUDA_SUCCESS) return -(int)r;
  cublasStatus_t st = cublasCreate(h);
  if (st != CUBLAS_STATUS_SUCCESS) return (int)st;
  st = cublasSetStream(*h, (cudaStream_t)s);
  if (st != CUBLAS_STATUS_SUCCESS) return (int)st;
  return (int)cublasSetPointerMode(*h, CUBLAS_POINTER_MODE_HOST);
}
int gc_cublas_destroy(CUcontext c, cublasHandle_t h) { WITH_CTX_BLAS(c, cublasDestroy(h)); }
int gc_cublas_set_math_mode(CUcontext c, cublasHandle_t h, int tf32) {
  WITH_CTX_BLAS(c, cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

#define OP(t) ((t) ? CUBLAS_OP_T : CUBLAS_OP_N)
#define F(p) ((float *)(uintptr_t)(p))
#define D(p) ((double *)(uintptr_t)(p))

int gc_sgemm(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
             CUdeviceptr a, int lda, CUdeviceptr b, int ldb, float beta, CUdeviceptr cm, int ldc) {
  WITH_CTX_BLAS(c, cublasSgemm(h, OP(ta), OP(tb), m, n, k, &alpha, F(a), lda, F(b), ldb, &beta, F(cm), ldc));
}
// gc_gemm_ex is cublasGemmEx with FP32 accumulation: A and B in 16-bit
// types (CUDA_R_16F, CUDA_R_16BF) or float, C in any of them.
int gc_gemm_ex(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha, CUdeviceptr a,
               int atype, int lda, CUdeviceptr b, int btype, int ldb, float beta, CUdeviceptr cm, int ctype, int ldc) {
  WITH_CTX_BLAS(c, cublasGemmEx(h, OP(ta), OP(tb), m, n, k, &alpha, (const void *)(uintptr_t)a, (cudaDataType)atype, lda,
                                (const void *)(uintptr_t)b, (cudaDataType)btype, ldb, &beta, (void *)(uintptr_t)cm,
                                (cudaDataType)ctype, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
// gc_gemm_strided_ex is cublasGemmStridedBatchedEx with FP32 accumulation,
// the types as gc_gemm_ex's.
int gc_gemm_strided_ex(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                       CUdeviceptr a, int atype, int lda, long long sa, CUdeviceptr b, int btype, int ldb,
                       long long sb, float beta, CUdeviceptr cm, int ctype, int ldc, long long sc, int batch) {
  WITH_CTX_BLAS(c, cublasGemmStridedBatchedEx(h, OP(ta), OP(tb), m, n, k, &alpha, (const void *)(uintptr_t)a,
                                              (cudaDataType)atype, lda, sa, (const void *)(uintptr_t)b,
                                              (cudaDataType)btype, ldb, sb, &beta, (void *)(uintptr_t)cm,
                                              (cudaDataType)ctype, ldc, sc, batch, CUBLAS_COMPUTE_32F,
                                              CUBLAS_GEMM_DEFAULT));
}
int gc_dgemm(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
             CUdeviceptr a, int lda, CUdeviceptr b, int ldb, double beta, CUdeviceptr cm, int ldc) {
  WITH_CTX_BLAS(c, cublasDgemm(h, OP(ta), OP(tb), m, n, k, &alpha, D(a), lda, D(b), ldb, &beta, D(cm), ldc));
}
int gc_sgemm_strided(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                     CUdeviceptr a, int lda, long long sa, CUdeviceptr b, int ldb, long long sb, float beta,
                     CUdeviceptr cm, int ldc, long long sc, int batch) {
  WITH_CTX_BLAS(c, cublasSgemmStridedBatched(h, OP(ta), OP(tb), m, n, k, &alpha, F(a), lda, sa, F(b), ldb, sb, &beta,
                                             F(cm), ldc, sc, batch));
}
int gc_dgemm_strided(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
                     CUdeviceptr a, int lda, long long sa, CUdeviceptr b, int ldb, long long sb, double beta,
                     CUdeviceptr cm, int ldc, long long sc, int batch) {
  WITH_CTX_BLAS(c, cublasDgemmStridedBatched(h, OP(ta), OP(tb), m, n, k, &alpha, D(a), lda, sa, D(b), ldb, sb, &beta,
                                             D(cm), ldc, sc, batch));
}
int gc_sgemv(CUcontext c, cublasHandle_t h, int t, int m, int n, float alpha, CUdeviceptr a, int lda,
             CUdeviceptr x, int incx, float beta, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasSgemv(h, OP(t), m, n, &alpha, F(a), lda, F(x), incx, &beta, F(y), incy));
}
int gc_dgemv(CUcontext c, cublasHandle_t h, int t, int m, int n, double alpha, CUdeviceptr a, int lda,
             CUdeviceptr x, int incx, double beta, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasDgemv(h, OP(t), m, n, &alpha, D(a), lda, D(x), incx, &beta, D(y), incy));
}
int gc_saxpy(CUcontext c, cublasHandle_t h, int n, float alpha, CUdeviceptr x, int incx, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasSaxpy(h, n, &alpha, F(x), incx, F(y), incy));
}
int gc_daxpy(CUcontext c, cublasHandle_t h, int n, double alpha, CUdeviceptr x, int incx, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasDaxpy(h, n, &alpha, D(x), incx, D(y), incy));
}
int gc_sscal(CUcontext c, cublasHandle_t h, int n, float alpha, CUdeviceptr x, int incx) {
  WITH_CTX_BLAS(c, cublasSscal(h, n, &alpha, F(x), incx));
}
int gc_dscal(CUcontext c, cublasHandle_t h, int n, double alpha, CUdeviceptr x, int incx) {
  WITH_CTX_BLAS(c, cublasDscal(h, n, &alpha, D(x), incx));
}
int gc_sdot(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy, float *r) {
  WITH_CTX_BLAS(c, cublasSdot(h, n, F(x), incx, F(y), incy, r));
}
int gc_ddot(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy, double *r) {
  WITH_CTX_BLAS(c, cublasDdot(h, n, D(x), incx, D(y), incy, r));
}
int gc_sasum(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, float *r) {
  WITH_CTX_BLAS(c, cublasSasum(h, n, F(x), incx, r));
}
int gc_dasum(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, double *r) {
  WITH_CTX_BLAS(c, cublasDasum(h, n, D(x), incx, r));
}
int gc_scopy(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasScopy(h, n, F(x), incx, F(y), incy));
}
int gc_dcopy(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy) {
  WITH_CTX_BLAS(c, cublasDcopy(h, n, D(x), incx, D(y), incy));
}

int gc_nvrtc_compile(const char *src, const char *name, const char **opts, int nopts,
                     char **log, size_t *log_size, char **cubin, size_t *cubin_size) {
  nvrtcProgram prog;
  *log = NULL; *log_size = 0; *cubin = NULL; *cubin_size = 0;
  nvrtcResult r = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) return (int)r;
  nvrtcResult cr = nvrtcCompileProgram(prog, nopts, opts);
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
    *log = (char *)malloc(n);
    if (*log != NULL && nvrtcGetProgramLog(prog, *log) == NVRTC_SUCCESS) *log_size = n - 1;
  }
  if (cr == NVRTC_SUCCESS) {
    cr = nvrtcGetCUBINSize(prog, &n);
    if (cr == NVRTC_SUCCESS) {
      *cubin = (char *)malloc(n);
      cr = nvrtcGetCUBIN(prog, *cubin);
      if (cr == NVRTC_SUCCESS) *cubin_size = n;
    }
  }
  nvrtcDestroyProgram(&prog);
  return (int)cr;
}

const char *gc_nvrtc_error_string(int r) { return nvrtcGetErrorString((nvrtcResult)r); }
int gc_nvrtc_version(int *major, int *minor) { return (int)nvrtcVersion(major, minor); }
