// C side of gocaffe's CUDA binding. Every function that touches a context
// takes it as its first argument and makes it current before doing anything
// else, within the same C call: a cgo call runs on one OS thread from start
// to finish, so no Go goroutine can reach CUDA without its context, whatever
// thread the scheduler put it on.
#ifndef GOCAFFE_CUDA_H
#define GOCAFFE_CUDA_H

#include <stddef.h>
#include <cuda.h>
#include <cublas_v2.h>
#include <nvrtc.h>

#define GC_MAX_ARGS 24
#define GC_ARG_SLOTS 64

const char *gc_error_name(CUresult r);
const char *gc_error_string(CUresult r);
const char *gc_cublas_status_name(int s);
const char *gc_cublas_status_string(int s);

CUresult gc_init(void);
CUresult gc_driver_version(int *v);
CUresult gc_device_count(int *n);
CUresult gc_device_get(CUdevice *d, int ordinal);
CUresult gc_device_name(CUdevice d, char *name, int len);
CUresult gc_device_total_mem(CUdevice d, size_t *bytes);
CUresult gc_device_attr(CUdevice d, int attr, int *v);
CUresult gc_primary_ctx_retain(CUdevice d, CUcontext *c);
CUresult gc_ctx_synchronize(CUcontext c);
CUresult gc_mem_info(CUcontext c, size_t *free_bytes, size_t *total);

CUresult gc_mem_alloc(CUcontext c, CUdeviceptr *p, size_t n);
CUresult gc_mem_free(CUcontext c, CUdeviceptr p);
CUresult gc_memset_d8(CUcontext c, CUdeviceptr p, unsigned char v, size_t n);
CUresult gc_memset_d32_async(CUcontext c, CUdeviceptr p, unsigned int v, size_t n, CUstream s);
CUresult gc_memcpy_htod(CUcontext c, CUdeviceptr dst, const void *src, size_t n);
CUresult gc_memcpy_dtoh(CUcontext c, void *dst, CUdeviceptr src, size_t n);
CUresult gc_memcpy_dtod(CUcontext c, CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult gc_memcpy_htod_async(CUcontext c, CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult gc_memcpy_dtoh_async(CUcontext c, void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gc_memcpy_dtod_async(CUcontext c, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gc_host_alloc(CUcontext c, void **p, size_t n);
CUresult gc_host_free(CUcontext c, void *p);

CUresult gc_stream_create(CUcontext c, CUstream *s, unsigned int flags);
CUresult gc_stream_destroy(CUcontext c, CUstream s);
CUresult gc_stream_synchronize(CUcontext c, CUstream s);
CUresult gc_event_create(CUcontext c, CUevent *e, unsigned int flags);
CUresult gc_event_destroy(CUcontext c, CUevent e);
CUresult gc_event_record(CUcontext c, CUevent e, CUstream s);
CUresult gc_stream_wait_event(CUcontext c, CUstream s, CUevent e);
CUresult gc_stream_begin_capture(CUcontext c, CUstream s);
CUresult gc_stream_end_capture(CUcontext c, CUstream s, CUgraph *g);
CUresult gc_stream_is_capturing(CUcontext c, CUstream s, int *capturing);
CUresult gc_graph_instantiate(CUcontext c, CUgraphExec *e, CUgraph g, size_t *nodes);
CUresult gc_graph_launch(CUcontext c, CUgraphExec e, CUstream s);
CUresult gc_graph_destroy(CUcontext c, CUgraph g, CUgraphExec e);
CUresult gc_event_synchronize(CUcontext c, CUevent e);
CUresult gc_event_elapsed(CUcontext c, float *ms, CUevent start, CUevent end);

CUresult gc_module_load(CUcontext c, CUmodule *m, const void *image);
CUresult gc_module_unload(CUcontext c, CUmodule m);
CUresult gc_module_function(CUcontext c, CUfunction *f, CUmodule m, const char *name);
CUresult gc_launch(CUcontext c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                   CUstream s, unsigned long long *slots, int *offsets, int nargs);

// cuBLAS wrappers return the cuBLAS status (>= 0), or minus the CUresult
// when the context could not be made current.
int gc_cublas_create(CUcontext c, cublasHandle_t *h, CUstream s);
int gc_cublas_destroy(CUcontext c, cublasHandle_t h);
int gc_cublas_set_math_mode(CUcontext c, cublasHandle_t h, int tf32);
int gc_sgemm(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
             CUdeviceptr a, int lda, CUdeviceptr b, int ldb, float beta, CUdeviceptr cm, int ldc);
int gc_gemm_ex(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha, CUdeviceptr a,
               int atype, int lda, CUdeviceptr b, int btype, int ldb, float beta, CUdeviceptr cm, int ctype, int ldc);
int gc_gemm_strided_ex(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                       CUdeviceptr a, int atype, int lda, long long sa, CUdeviceptr b, int btype, int ldb,
                       long long sb, float beta, CUdeviceptr cm, int ctype, int ldc, long long sc, int batch);
int gc_dgemm(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
             CUdeviceptr a, int lda, CUdeviceptr b, int ldb, double beta, CUdeviceptr cm, int ldc);
int gc_sgemm_strided(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                     CUdeviceptr a, int lda, long long sa, CUdeviceptr b, int ldb, long long sb, float beta,
                     CUdeviceptr cm, int ldc, long long sc, int batch);
int gc_dgemm_strided(CUcontext c, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
                     CUdeviceptr a, int lda, long long sa, CUdeviceptr b, int ldb, long long sb, double beta,
                     CUdeviceptr cm, int ldc, long long sc, int batch);
int gc_sgemv(CUcontext c, cublasHandle_t h, int t, int m, int n, float alpha, CUdeviceptr a, int lda,
             CUdeviceptr x, int incx, float beta, CUdeviceptr y, int incy);
int gc_dgemv(CUcontext c, cublasHandle_t h, int t, int m, int n, double alpha, CUdeviceptr a, int lda,
             CUdeviceptr x, int incx, double beta, CUdeviceptr y, int incy);
int gc_saxpy(CUcontext c, cublasHandle_t h, int n, float alpha, CUdeviceptr x, int incx, CUdeviceptr y, int incy);
int gc_daxpy(CUcontext c, cublasHandle_t h, int n, double alpha, CUdeviceptr x, int incx, CUdeviceptr y, int incy);
int gc_sscal(CUcontext c, cublasHandle_t h, int n, float alpha, CUdeviceptr x, int incx);
int gc_dscal(CUcontext c, cublasHandle_t h, int n, double alpha, CUdeviceptr x, int incx);
int gc_sdot(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy, float *r);
int gc_ddot(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy, double *r);
int gc_sasum(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, float *r);
int gc_dasum(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, double *r);
int gc_scopy(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy);
int gc_dcopy(CUcontext c, cublasHandle_t h, int n, CUdeviceptr x, int incx, CUdeviceptr y, int incy);

// NVRTC: compiles src to a CUBIN for the options given. On return *log and
// *cubin (when not NULL) are malloc'ed and owned by the caller.
int gc_nvrtc_compile(const char *src, const char *name, const char **opts, int nopts,
                     char **log, size_t *log_size, char **cubin, size_t *cubin_size);
const char *gc_nvrtc_error_string(int r);
int gc_nvrtc_version(int *major, int *minor);

#endif
