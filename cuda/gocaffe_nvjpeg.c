//go:build cuda

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gocaffe_nvjpeg.h"

// Where nvjpeg.h is installed, hold the values gocaffe_nvjpeg.h declares
// to it: the build then fails instead of calling nvJPEG with a wrong
// number.
#if defined(__has_include)
#if __has_include(<nvjpeg.h>)
#include <nvjpeg.h>
_Static_assert(NVJPEG_BACKEND_DEFAULT == GC_JPEG_BACKEND_DEFAULT, "NVJPEG_BACKEND_DEFAULT");
_Static_assert(NVJPEG_BACKEND_HARDWARE == GC_JPEG_BACKEND_HARDWARE, "NVJPEG_BACKEND_HARDWARE");
_Static_assert(NVJPEG_OUTPUT_Y == GC_JPEG_OUTPUT_Y, "NVJPEG_OUTPUT_Y");
_Static_assert(NVJPEG_OUTPUT_BGR == GC_JPEG_OUTPUT_BGR, "NVJPEG_OUTPUT_BGR");
_Static_assert(NVJPEG_MAX_COMPONENT == GC_JPEG_MAX_COMPONENT, "NVJPEG_MAX_COMPONENT");
_Static_assert(sizeof(nvjpegDevAllocator_t) == 2 * sizeof(void *), "nvjpegDevAllocator_t");
_Static_assert(sizeof(nvjpegPinnedAllocator_t) == 2 * sizeof(void *), "nvjpegPinnedAllocator_t");
_Static_assert(sizeof(nvjpegImage_t) == GC_JPEG_MAX_COMPONENT * (sizeof(void *) + sizeof(size_t)), "nvjpegImage_t");
#endif
#endif

// nvjpegImage_t: a pointer and a pitch per channel.
typedef struct {
  unsigned char *channel[GC_JPEG_MAX_COMPONENT];
  size_t pitch[GC_JPEG_MAX_COMPONENT];
} gc_jpeg_image;

typedef void *H;

// The entry points, looked up with dlsym; every enum is an int, every
// handle a pointer, cudaStream_t a CUstream (the same type).
#define GC_JPEG_FUNCS(X)                                                                                   \
  X(int, nvjpegCreateEx, (int, void *, void *, unsigned, H *))                                             \
  X(int, nvjpegDestroy, (H))                                                                               \
  X(int, nvjpegJpegStateCreate, (H, H *))                                                                  \
  X(int, nvjpegJpegStateDestroy, (H))                                                                      \
  X(int, nvjpegJpegStreamCreate, (H, H *))                                                                 \
  X(int, nvjpegJpegStreamDestroy, (H))                                                                     \
  X(int, nvjpegJpegStreamParse, (H, const unsigned char *, size_t, int, int, H))                           \
  X(int, nvjpegDecodeBatchedSupported, (H, H, int *))                                                      \
  X(int, nvjpegDecodeBatchedInitialize, (H, H, int, int, int))                                             \
  X(int, nvjpegDecodeBatched, (H, H, const unsigned char *const *, const size_t *, gc_jpeg_image *, CUstream))

#define GC_DECLARE(ret, name, args) static ret(*p_##name) args;
GC_JPEG_FUNCS(GC_DECLARE)

static int loaded;

int gc_jpeg_load(char *err, int errlen) {
  if (loaded) return 0;
  const char *names[] = {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11", "libnvjpeg.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
  }
  if (lib == NULL) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "libnvjpeg.so not found");
    return -1;
  }
#define GC_LOAD(ret, name, args)                                      \
  p_##name = (ret(*) args)dlsym(lib, #name);                          \
  if (p_##name == NULL) {                                             \
    snprintf(err, errlen, "nvJPEG has no %s (CUDA 11 or later needed)", #name); \
    return -1;                                                        \
  }
  GC_JPEG_FUNCS(GC_LOAD)
  loaded = 1;
  return 0;
}

const char *gc_jpeg_status_string(int s) {
  switch (s) {
    case GC_JPEG_NOT_LOADED: return "nvJPEG is not loaded";
    case GC_JPEG_UNSUPPORTED: return "an image the backend does not decode in a batch";
    case 1: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case 2: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case 3: return "NVJPEG_STATUS_BAD_JPEG";
    case 4: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case 5: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case 6: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case 7: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case 8: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case 9: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case 10: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "unknown nvJPEG status";
}

// nvJPEG's memory comes from these caching allocators rather than from
// cudaMalloc and cudaFree (and their pinned twins), which it calls
// otherwise as it goes; cudaFree waits for all the work queued on the
// device. With them a batch of 256 of CaffeNet's JPEGs decoded in 11.3
// ms on the H100 instead of 13.1 (BenchmarkJPEGDecodeBatch). A freed block
// is kept for the next request it fits; the blocks go back to the driver
// when the last decoder is destroyed.
typedef struct {
  void *p;
  size_t size;
  int used;
} gc_block;

#define GC_BLOCKS 256

typedef struct {
  gc_block blocks[GC_BLOCKS];
  int n;
} gc_cache;

static gc_cache dev_cache, pinned_cache;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static int decoders;

// cache_take returns a free block of the cache of at least size bytes
// and at most twice that, the smallest, marked used; NULL if none.
static void *cache_take(gc_cache *c, size_t size) {
  gc_block *best = NULL;
  for (int i = 0; i < c->n; i++) {
    gc_block *b = &c->blocks[i];
    if (!b->used && b->size >= size && b->size <= 2 * size + 4096 && (best == NULL || b->size < best->size)) best = b;
  }
  if (best == NULL) return NULL;
  best->used = 1;
  return best->p;
}

// cache_add records a new block in use; 0 when the cache is full (the
// block is then freed when given back).
static int cache_add(gc_cache *c, void *p, size_t size) {
  if (c->n == GC_BLOCKS) return 0;
  c->blocks[c->n++] = (gc_block){p, size, 1};
  return 1;
}

// cache_give marks p free, reporting 0 if it is not the cache's.
static int cache_give(gc_cache *c, void *p) {
  for (int i = 0; i < c->n; i++) {
    if (c->blocks[i].p == p) {
      c->blocks[i].used = 0;
      return 1;
    }
  }
  return 0;
}

// cache_release frees the cache's free blocks.
static void cache_release(gc_cache *c, int pinned) {
  int k = 0;
  for (int i = 0; i < c->n; i++) {
    gc_block b = c->blocks[i];
    if (b.used) {
      c->blocks[k++] = b;
    } else if (pinned) {
      cuMemFreeHost(b.p);
    } else {
      cuMemFree((CUdeviceptr)b.p);
    }
  }
  c->n = k;
}

// The allocators' functions return 0 (cudaSuccess) or 2
// (cudaErrorMemoryAllocation); nvJPEG calls them with our context current.
static int dev_malloc(void **p, size_t size) {
  pthread_mutex_lock(&cache_mu);
  *p = cache_take(&dev_cache, size);
  if (*p == NULL) {
    CUdeviceptr d;
    if (cuMemAlloc(&d, size) != CUDA_SUCCESS) {
      pthread_mutex_unlock(&cache_mu);
      return 2;
    }
    *p = (void *)d;
    cache_add(&dev_cache, *p, size);
  }
  pthread_mutex_unlock(&cache_mu);
  return 0;
}

static int dev_free(void *p) {
  pthread_mutex_lock(&cache_mu);
  int cached = cache_give(&dev_cache, p);
  pthread_mutex_unlock(&cache_mu);
  if (!cached && p != NULL) cuMemFree((CUdeviceptr)p);
  return 0;
}

static int pinned_malloc(void **p, size_t size, unsigned int flags) {
  (void)flags;
  pthread_mutex_lock(&cache_mu);
  *p = cache_take(&pinned_cache, size);
  if (*p == NULL) {
    if (cuMemHostAlloc(p, size, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
      pthread_mutex_unlock(&cache_mu);
      return 2;
    }
    cache_add(&pinned_cache, *p, size);
  }
  pthread_mutex_unlock(&cache_mu);
  return 0;
}

static int pinned_free(void *p) {
  pthread_mutex_lock(&cache_mu);
  int cached = cache_give(&pinned_cache, p);
  pthread_mutex_unlock(&cache_mu);
  if (!cached && p != NULL) cuMemFreeHost(p);
  return 0;
}

// nvjpegDevAllocator_t and nvjpegPinnedAllocator_t.
typedef struct {
  int (*dev_malloc)(void **, size_t);
  int (*dev_free)(void *);
} gc_dev_allocator;

typedef struct {
  int (*pinned_malloc)(void **, size_t, unsigned int);
  int (*pinned_free)(void *);
} gc_pinned_allocator;

static gc_dev_allocator dev_allocator = {dev_malloc, dev_free};
static gc_pinned_allocator pinned_allocator = {pinned_malloc, pinned_free};

// CTX makes c current (see gocaffe_cuda.c's WITH_CTX_BLAS): nvJPEG works
// through the runtime API, on the current context.
#define CTX(c)                               \
  do {                                       \
    if (!loaded) return GC_JPEG_NOT_LOADED;  \
    CUresult r_ = cuCtxSetCurrent(c);        \
    if (r_ != CUDA_SUCCESS) return -(int)r_; \
  } while (0)

int gc_jpeg_destroy(CUcontext c, gc_jpeg *j) {
  CTX(c);
  int r = 0, s;
  if (j->parsed && (s = p_nvjpegJpegStreamDestroy(j->parsed)) != 0) r = s;
  if (j->state && (s = p_nvjpegJpegStateDestroy(j->state)) != 0) r = s;
  if (j->handle) {
    if ((s = p_nvjpegDestroy(j->handle)) != 0) r = s;
    pthread_mutex_lock(&cache_mu);
    if (--decoders == 0) {
      cache_release(&dev_cache, 0);
      cache_release(&pinned_cache, 1);
    }
    pthread_mutex_unlock(&cache_mu);
  }
  memset(j, 0, sizeof *j);
  return r;
}

int gc_jpeg_create(CUcontext c, int backend, gc_jpeg *j) {
  CTX(c);
  memset(j, 0, sizeof *j);
  int r = p_nvjpegCreateEx(backend, &dev_allocator, &pinned_allocator, 0, &j->handle);
  if (r == 0) {
    pthread_mutex_lock(&cache_mu);
    decoders++;
    pthread_mutex_unlock(&cache_mu);
  }
  if (r == 0) r = p_nvjpegJpegStateCreate(j->handle, &j->state);
  if (r == 0) r = p_nvjpegJpegStreamCreate(j->handle, &j->parsed);
  if (r != 0) {
    gc_jpeg_destroy(c, j);
    return r;
  }
  j->backend = backend;
  return 0;
}

// gc_jpeg_check checks that the hardware backend decodes each of n images
// in a batch (GC_JPEG_UNSUPPORTED if not: a progressive JPEG, say).
int gc_jpeg_check(CUcontext c, gc_jpeg *j, int n, const unsigned char *const *data, const size_t *lengths) {
  CTX(c);
  int r;
  for (int i = 0; i < n; i++) {
    int unsupported = 0;
    if ((r = p_nvjpegJpegStreamParse(j->handle, data[i], lengths[i], 0, 0, j->parsed)) != 0) return r;
    if ((r = p_nvjpegDecodeBatchedSupported(j->handle, j->parsed, &unsupported)) != 0) return r;
    if (unsupported) return GC_JPEG_UNSUPPORTED;
  }
  return 0;
}

// gc_jpeg_decode_batched decodes n images into out, image i's planes (one
// for Y, three for BGR) of heights[i] x widths[i] bytes one after another
// from out + i*slot, on stream s.
int gc_jpeg_decode_batched(CUcontext c, gc_jpeg *j, int n, int format, const unsigned char *const *data,
                           const size_t *lengths, CUdeviceptr out, size_t slot, const int *heights,
                           const int *widths, CUstream s) {
  CTX(c);
  int r;
  if (j->batch != n || j->format != format) {
    if ((r = p_nvjpegDecodeBatchedInitialize(j->handle, j->state, n, 1, format)) != 0) return r;
    j->batch = n;
    j->format = format;
  }
  gc_jpeg_image *images = calloc(n, sizeof *images);
  if (images == NULL) return 5;  // NVJPEG_STATUS_ALLOCATOR_FAILURE
  int planes = format == GC_JPEG_OUTPUT_Y ? 1 : 3;
  for (int i = 0; i < n; i++) {
    size_t plane = (size_t)heights[i] * widths[i];
    for (int k = 0; k < planes; k++) {
      images[i].channel[k] = (unsigned char *)(out + i * slot + k * plane);
      images[i].pitch[k] = widths[i];
    }
  }
  r = p_nvjpegDecodeBatched(j->handle, j->state, data, lengths, images, s);
  free(images);
  return r;
}
