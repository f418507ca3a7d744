//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "gocaffe_nvjpeg.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocaffe/gocaffe/settings"
)

var (
	jpegLoadOnce sync.Once
	jpegLoadErr  error
)

// loadJPEG opens libnvjpeg once per process.
func loadJPEG() error {
	jpegLoadOnce.Do(func() {
		var buf [512]C.char
		if C.gc_jpeg_load(&buf[0], C.int(len(buf))) != 0 {
			jpegLoadErr = fmt.Errorf("%w: %s", ErrNoNVJPEG, C.GoString(&buf[0]))
		}
	})
	return jpegLoadErr
}

// nvJPEG's statuses for images it cannot take (NVJPEG_STATUS_BAD_JPEG,
// _JPEG_NOT_SUPPORTED, _INCOMPLETE_BITSTREAM): the host decoder can, or
// says what is wrong with them.
const (
	jpegBadJPEG          = 3
	jpegNotSupported     = 4
	jpegIncompleteStream = 10
)

func jpegError(call string, s C.int) error {
	switch {
	case s == 0:
		return nil
	case s == C.GC_JPEG_NOT_LOADED:
		return fmt.Errorf("cuda: %s: %w", call, ErrNoNVJPEG)
	case s == C.GC_JPEG_UNSUPPORTED:
		return fmt.Errorf("cuda: %s: %w: %s", call, ErrJPEGUnsupported, C.GoString(C.gc_jpeg_status_string(s)))
	case s < 0:
		return driverError(call, C.CUresult(-s))
	}
	e := &Error{Lib: "nvJPEG", Call: call, Code: int(s), Name: C.GoString(C.gc_jpeg_status_string(s))}
	if s == jpegBadJPEG || s == jpegNotSupported || s == jpegIncompleteStream {
		return fmt.Errorf("%w: %w", ErrJPEGUnsupported, e)
	}
	return e
}

// JPEGDecoder decodes batches of JPEG images on a device with nvJPEG, for
// one goroutine at a time. It takes the hardware decoder where the device
// has one (A100, H100), else nvJPEG's default backend (Huffman decoding on
// the host, the rest on the device); settings.NVJPEGDefault
// (GOCAFFE_NVJPEG_BACKEND=default) picks the latter everywhere.
//
// nvJPEG's pixels are not libjpeg's: its IDCT and chroma upsampling round
// differently, so a decoded value may differ from Caffe's (OpenCV's
// libjpeg) by a few levels.
type JPEGDecoder struct {
	dev *Device
	j   C.gc_jpeg
	// The batch's bitstreams, copied into pinned memory, and where each
	// begins; staged stays in use until done marks the decode's end.
	staged  []byte
	ptrs    []*C.uchar
	lengths []C.size_t
	heights []C.int
	widths  []C.int
	done    *Event
	pending bool
	// unchecked skips the hardware backend's check of each image, for
	// timing it (export_cuda_test.go).
	unchecked bool
}

// NewJPEGDecoder loads libnvjpeg (CUDA 11 to 13) and creates a decoder on
// the device, on the backend the setting asks for (NVJPEGHardware falls
// back to nvJPEG's default backend where the device has no hardware
// decoder). Without the library the error wraps ErrNoNVJPEG.
func (d *Device) NewJPEGDecoder(backend settings.NVJPEGBackend) (*JPEGDecoder, error) {
	if err := loadJPEG(); err != nil {
		return nil, err
	}
	j := &JPEGDecoder{dev: d}
	backends := []C.int{C.GC_JPEG_BACKEND_HARDWARE, C.GC_JPEG_BACKEND_DEFAULT}
	switch backend {
	case settings.NVJPEGHardware:
	case settings.NVJPEGDefault:
		backends = backends[1:]
	default:
		return nil, fmt.Errorf("cuda: nvJPEG backend %v: want hardware or default", backend)
	}
	var err error
	for _, b := range backends {
		if err = jpegError("nvjpegCreateEx", C.gc_jpeg_create(d.ctx, b, &j.j)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if j.done, err = d.NewSyncEvent(); err != nil {
		return nil, errors.Join(err, j.Close())
	}
	return j, nil
}

// Hardware reports whether the decoder runs on the device's hardware JPEG
// decoder.
func (j *JPEGDecoder) Hardware() bool { return j.j.backend == C.GC_JPEG_BACKEND_HARDWARE }

// DecodeBatch queues on stream s the decoding of images, each a JPEG of
// height x width pixels and channels (1: luma; 3: planes of blue, green,
// red, Caffe's order) components, into out: image i's planes one after
// another from out + i*channels*height*width. The bitstreams are copied
// before it returns; the decoding may still be running. An error wrapping
// ErrJPEGUnsupported means nothing was queued and the batch must be
// decoded another way.
func (j *JPEGDecoder) DecodeBatch(images [][]byte, height, width, channels int, out DevicePtr, s *Stream) error {
	if channels != 1 && channels != 3 {
		return fmt.Errorf("cuda: DecodeBatch of %d channels: want 1 or 3", channels)
	}
	if len(images) == 0 {
		return nil
	}
	if err := j.stage(images); err != nil {
		return err
	}
	n := len(images)
	j.heights, j.widths = j.heights[:0], j.widths[:0]
	for range n {
		j.heights = append(j.heights, C.int(height))
		j.widths = append(j.widths, C.int(width))
	}
	format := C.int(C.GC_JPEG_OUTPUT_BGR)
	if channels == 1 {
		format = C.GC_JPEG_OUTPUT_Y
	}
	if j.Hardware() && !j.unchecked {
		if err := jpegError("nvjpegDecodeBatchedSupported", C.gc_jpeg_check(j.dev.ctx, &j.j, C.int(n), &j.ptrs[0], &j.lengths[0])); err != nil {
			return err
		}
	}
	slot := channels * height * width
	err := jpegError(fmt.Sprintf("nvjpegDecodeBatched(%d images of %dx%dx%d)", n, channels, height, width),
		C.gc_jpeg_decode_batched(j.dev.ctx, &j.j, C.int(n), format, &j.ptrs[0], &j.lengths[0],
			C.CUdeviceptr(out), C.size_t(slot), &j.heights[0], &j.widths[0], s.handle()))
	if err != nil {
		return err
	}
	if err := j.done.Record(s); err != nil {
		return err
	}
	j.pending = true
	return nil
}

// stage copies the bitstreams into pinned memory, after the previous
// batch's decoding (which may still read it) ends.
func (j *JPEGDecoder) stage(images [][]byte) error {
	if j.pending {
		j.pending = false
		if err := j.done.Synchronize(); err != nil {
			return fmt.Errorf("cuda: waiting for the previous JPEG batch: %w", err)
		}
	}
	total := 0
	for _, im := range images {
		if len(im) == 0 {
			return fmt.Errorf("%w: an image of 0 bytes", ErrJPEGUnsupported)
		}
		total += len(im)
	}
	if total > len(j.staged) {
		if err := j.dev.HostFree(j.staged); err != nil {
			return err
		}
		j.staged = nil
		var err error
		if j.staged, err = j.dev.HostAlloc(total + total/4); err != nil {
			return err
		}
	}
	j.ptrs, j.lengths = j.ptrs[:0], j.lengths[:0]
	at := 0
	for _, im := range images {
		copy(j.staged[at:], im)
		j.ptrs = append(j.ptrs, (*C.uchar)(unsafe.Pointer(&j.staged[at])))
		j.lengths = append(j.lengths, C.size_t(len(im)))
		at += len(im)
	}
	return nil
}

// Close waits for the decoding queued last and frees the decoder.
func (j *JPEGDecoder) Close() error {
	var errs []error
	if j.done != nil {
		errs = append(errs, j.done.Synchronize(), j.done.Close())
		j.done = nil
	}
	if j.staged != nil {
		errs = append(errs, j.dev.HostFree(j.staged))
		j.staged = nil
	}
	if j.j.handle != nil {
		errs = append(errs, jpegError("nvjpegDestroy", C.gc_jpeg_destroy(j.dev.ctx, &j.j)))
	}
	return errors.Join(errs...)
}
