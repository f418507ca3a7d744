// nvJPEG for gocaffe's CUDA binding, loaded at run time as cuDNN is: the
// batched decoder that CUDA 11 to 13 share is declared here (and checked
// against nvjpeg.h where it is installed), and libnvjpeg is opened with
// dlopen on first use, so that building needs no nvJPEG and a machine
// without it decodes on the host.
#ifndef GOCAFFE_NVJPEG_H
#define GOCAFFE_NVJPEG_H

#include <stddef.h>
#include <cuda.h>

// The values of nvJPEG's enums that gocaffe uses.
#define GC_JPEG_BACKEND_DEFAULT 0   // NVJPEG_BACKEND_DEFAULT
#define GC_JPEG_BACKEND_HARDWARE 3  // NVJPEG_BACKEND_HARDWARE
#define GC_JPEG_OUTPUT_Y 2          // NVJPEG_OUTPUT_Y
#define GC_JPEG_OUTPUT_BGR 4        // NVJPEG_OUTPUT_BGR (planar)
#define GC_JPEG_MAX_COMPONENT 4     // NVJPEG_MAX_COMPONENT

// A decoder: the library's handle, a decoding state and a stream parser.
typedef struct {
  void *handle;  // nvjpegHandle_t
  void *state;   // nvjpegJpegState_t
  void *parsed;  // nvjpegJpegStream_t
  int backend;   // the backend the handle was created with
  int batch;     // the batch size and output format the state is set up for
  int format;
} gc_jpeg;

// Statuses of gocaffe's own: the library is not loaded, or an image is
// one the chosen backend cannot decode in a batch.
#define GC_JPEG_NOT_LOADED (-1000)
#define GC_JPEG_UNSUPPORTED (-1001)

int gc_jpeg_load(char *err, int errlen);
const char *gc_jpeg_status_string(int s);
int gc_jpeg_create(CUcontext c, int backend, gc_jpeg *j);
int gc_jpeg_destroy(CUcontext c, gc_jpeg *j);
int gc_jpeg_check(CUcontext c, gc_jpeg *j, int n, const unsigned char *const *data, const size_t *lengths);
int gc_jpeg_decode_batched(CUcontext c, gc_jpeg *j, int n, int format, const unsigned char *const *data,
                           const size_t *lengths, CUdeviceptr out, size_t slot, const int *heights,
                           const int *widths, CUstream s);

#endif
