//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda -lcublas -lnvrtc
#cgo noescape gc_device_count
#cgo noescape gc_device_get
#cgo noescape gc_device_name
#cgo noescape gc_device_total_mem
#cgo noescape gc_device_attr
#cgo noescape gc_primary_ctx_retain
#cgo noescape gc_mem_info
#cgo noescape gc_mem_alloc
#cgo noescape gc_memcpy_htod
#cgo noescape gc_memcpy_dtoh
#cgo noescape gc_host_alloc
#cgo noescape gc_driver_version
#cgo nocallback gc_mem_alloc
#cgo nocallback gc_mem_free
#cgo nocallback gc_memset_d8
#cgo nocallback gc_memcpy_htod
#cgo nocallback gc_memcpy_dtoh
#cgo nocallback gc_memcpy_dtod
#cgo nocallback gc_memcpy_htod_async
#cgo nocallback gc_memcpy_dtoh_async
#include <stdlib.h>
#include "gocaffe_cuda.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// driverError turns a CUresult into an *Error naming call.
func driverError(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &Error{
		Lib:  "CUDA",
		Call: call,
		Code: int(r),
		Name: C.GoString(C.gc_error_name(r)),
		Desc: C.GoString(C.gc_error_string(r)),
	}
}

var (
	initOnce sync.Once
	initErr  error

	devicesMu      sync.Mutex
	devices        = map[int]*Device{}
	defaultOrdinal int
)

// ensureInit initialises the driver once per process.
func ensureInit() error {
	initOnce.Do(func() { initErr = driverError("cuInit", C.gc_init()) })
	return initErr
}

// Available reports whether this binary was built with CUDA support. It
// does not say whether a device is present: see DeviceCount.
func Available() bool { return true }

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := ensureInit(); err != nil {
		return 0, err
	}
	var n C.int
	if err := driverError("cuDeviceGetCount", C.gc_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DriverVersion returns the CUDA driver's version, e.g. 13000 for 13.0.
func DriverVersion() (int, error) {
	if err := ensureInit(); err != nil {
		return 0, err
	}
	var v C.int
	if err := driverError("cuDriverGetVersion", C.gc_driver_version(&v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Device is a CUDA device with its primary context, compute stream and
// (created on first use) cuBLAS handle. Devices are made once per process
// and shared: GetDevice returns the same *Device for the same ordinal.
type Device struct {
	ordinal int
	dev     C.CUdevice
	ctx     C.CUcontext
	stream  *Stream
	major   int
	minor   int

	memMu       sync.Mutex
	sizes       map[DevicePtr]int // of the allocations Alloc made
	inUse, peak int

	dnnOnce sync.Once
	dnn     *DNN
	dnnErr  error

	blasOnce sync.Once
	blas     *Blas
	blasErr  error

	modMu   sync.Mutex
	modules map[string]*Module // by source hash
}

// GetDevice returns device ordinal, retaining its primary context on first
// use.
func GetDevice(ordinal int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: invalid device ordinal %d: this machine has %d CUDA device(s), numbered 0 to %d", ordinal, n, n-1)
	}
	devicesMu.Lock()
	defer devicesMu.Unlock()
	if d, ok := devices[ordinal]; ok {
		return d, nil
	}
	d := &Device{ordinal: ordinal, modules: map[string]*Module{}, sizes: map[DevicePtr]int{}}
	if err := driverError(fmt.Sprintf("cuDeviceGet(%d)", ordinal), C.gc_device_get(&d.dev, C.int(ordinal))); err != nil {
		return nil, err
	}
	if err := driverError(fmt.Sprintf("cuDevicePrimaryCtxRetain(device %d)", ordinal), C.gc_primary_ctx_retain(d.dev, &d.ctx)); err != nil {
		return nil, err
	}
	var err2 error
	if d.major, err2 = d.attr(C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR); err2 != nil {
		return nil, err2
	}
	if d.minor, err2 = d.attr(C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR); err2 != nil {
		return nil, err2
	}
	// The compute stream is blocking, so that the legacy-stream synchronous
	// copies are ordered after the compute work queued before them.
	if d.stream, err2 = d.newStream(0); err2 != nil {
		return nil, err2
	}
	devices[ordinal] = d
	return d, nil
}

// SetDefaultDevice chooses the device DefaultDevice returns (0 unless set).
func SetDefaultDevice(ordinal int) error {
	if _, err := GetDevice(ordinal); err != nil {
		return err
	}
	devicesMu.Lock()
	defaultOrdinal = ordinal
	devicesMu.Unlock()
	return nil
}

// DefaultDevice returns the device chosen by SetDefaultDevice, device 0 by
// default. Memory that was given no device uses it.
func DefaultDevice() (*Device, error) {
	devicesMu.Lock()
	o := defaultOrdinal
	devicesMu.Unlock()
	return GetDevice(o)
}

// Ordinal returns the device's number.
//
//apigen:stub return -1
func (d *Device) Ordinal() int { return d.ordinal }

// ComputeCapability returns the device's major and minor compute capability.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// Stream returns the device's compute stream.
func (d *Device) Stream() *Stream { return d.stream }

func (d *Device) attr(a C.int) (int, error) {
	var v C.int
	if err := driverError(fmt.Sprintf("cuDeviceGetAttribute(%d, device %d)", int(a), d.ordinal), C.gc_device_attr(d.dev, a, &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Properties returns the device's properties.
func (d *Device) Properties() (*Properties, error) {
	p := &Properties{Ordinal: d.ordinal, Major: d.major, Minor: d.minor}
	var name [256]C.char
	if err := driverError("cuDeviceGetName", C.gc_device_name(d.dev, &name[0], C.int(len(name)))); err != nil {
		return nil, err
	}
	p.Name = C.GoString(&name[0])
	var total C.size_t
	if err := driverError("cuDeviceTotalMem", C.gc_device_total_mem(d.dev, &total)); err != nil {
		return nil, err
	}
	p.TotalGlobalMem = uint64(total)
	ints := []struct {
		attr C.int
		dst  *int
	}{
		{C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &p.SharedMemPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &p.RegsPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_WARP_SIZE, &p.WarpSize},
		{C.CU_DEVICE_ATTRIBUTE_MAX_PITCH, &p.MemPitch},
		{C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &p.MaxThreadsPerBlock},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &p.MaxThreadsDim[0]},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &p.MaxThreadsDim[1]},
		{C.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &p.MaxThreadsDim[2]},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &p.MaxGridSize[0]},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &p.MaxGridSize[1]},
		{C.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &p.MaxGridSize[2]},
		{C.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &p.ClockRateKHz},
		{C.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, &p.TotalConstMem},
		{C.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, &p.TextureAlignment},
		{C.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, &p.AsyncEngineCount},
		{C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p.MultiProcessorCount},
		{C.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &p.L2CacheSize},
		{C.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &p.MemoryClockRateKHz},
		{C.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &p.MemoryBusWidth},
		{C.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &p.PCIDomain},
		{C.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &p.PCIBus},
		{C.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &p.PCI},
	}
	for _, a := range ints {
		v, err := d.attr(a.attr)
		if err != nil {
			return nil, err
		}
		*a.dst = v
	}
	timeout, err := d.attr(C.CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT)
	if err != nil {
		return nil, err
	}
	ecc, err := d.attr(C.CU_DEVICE_ATTRIBUTE_ECC_ENABLED)
	if err != nil {
		return nil, err
	}
	p.KernelExecTimeout, p.ECCEnabled = timeout != 0, ecc != 0
	if p.DriverVersion, err = DriverVersion(); err != nil {
		return nil, err
	}
	return p, nil
}

// MemInfo returns the free and total device memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	var f, t C.size_t
	if err := driverError("cuMemGetInfo", C.gc_mem_info(d.ctx, &f, &t)); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// Synchronize waits until all work queued on the device has finished.
func (d *Device) Synchronize() error {
	if r := C.gc_ctx_synchronize(d.ctx); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuCtxSynchronize(device %d)", d.ordinal), r)
	}
	return nil
}

// Alloc allocates n bytes of device memory (uninitialised). Alloc(0)
// returns the null pointer and no error.
func (d *Device) Alloc(n int) (DevicePtr, error) {
	if n < 0 {
		return 0, fmt.Errorf("cuda: Alloc of a negative size %d", n)
	}
	if n == 0 {
		return 0, nil
	}
	var p C.CUdeviceptr
	if r := C.gc_mem_alloc(d.ctx, &p, C.size_t(n)); r != C.CUDA_SUCCESS {
		return 0, driverError(fmt.Sprintf("cuMemAlloc(%d bytes on device %d)", n, d.ordinal), r)
	}
	d.memMu.Lock()
	d.sizes[DevicePtr(p)] = n
	d.inUse += n
	d.peak = max(d.peak, d.inUse)
	d.memMu.Unlock()
	return DevicePtr(p), nil
}

// MemStats returns the device memory gocaffe holds through Alloc now, and
// the most it held at once since the process started (or ResetPeak).
func (d *Device) MemStats() (inUse, peak int) {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	return d.inUse, d.peak
}

// ResetPeak starts the peak MemStats reports again from the memory in use.
func (d *Device) ResetPeak() {
	d.memMu.Lock()
	d.peak = d.inUse
	d.memMu.Unlock()
}

// Free frees memory from Alloc. Free(0) does nothing.
func (d *Device) Free(p DevicePtr) error {
	if p == 0 {
		return nil
	}
	if r := C.gc_mem_free(d.ctx, C.CUdeviceptr(p)); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemFree(%#x on device %d)", uintptr(p), d.ordinal), r)
	}
	d.memMu.Lock()
	d.inUse -= d.sizes[p]
	delete(d.sizes, p)
	d.memMu.Unlock()
	return nil
}

// Memset sets n bytes at p to value.
func (d *Device) Memset(p DevicePtr, value byte, n int) error {
	if n == 0 {
		return nil
	}
	if r := C.gc_memset_d8(d.ctx, C.CUdeviceptr(p), C.uchar(value), C.size_t(n)); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemsetD8(%d bytes)", n), r)
	}
	return nil
}

// hostPtr returns the address of b's first byte for a copy.
func hostPtr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// CopyHtoD copies len(src) bytes from the host to dst and returns when the
// copy is done.
func (d *Device) CopyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if r := C.gc_memcpy_htod(d.ctx, C.CUdeviceptr(dst), hostPtr(src), C.size_t(len(src))); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyHtoD(%d bytes)", len(src)), r)
	}
	return nil
}

// CopyDtoH copies len(dst) bytes from src to the host, after the work
// queued on the compute stream, and returns when the copy is done.
func (d *Device) CopyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	if r := C.gc_memcpy_dtoh(d.ctx, hostPtr(dst), C.CUdeviceptr(src), C.size_t(len(dst))); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyDtoH(%d bytes)", len(dst)), r)
	}
	return nil
}

// CopyDtoD copies n bytes between device buffers.
func (d *Device) CopyDtoD(dst, src DevicePtr, n int) error {
	if n == 0 {
		return nil
	}
	if r := C.gc_memcpy_dtod(d.ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyDtoD(%d bytes)", n), r)
	}
	return nil
}

// CopyHtoDAsync queues a copy of src to dst on stream s and returns at once.
// For the copy to overlap other work src must be pinned memory (HostAlloc),
// which must then stay untouched until s is synchronised; from pageable
// memory the driver stages the bytes before returning.
func (d *Device) CopyHtoDAsync(dst DevicePtr, src []byte, s *Stream) error {
	if len(src) == 0 {
		return nil
	}
	if r := C.gc_memcpy_htod_async(d.ctx, C.CUdeviceptr(dst), hostPtr(src), C.size_t(len(src)), s.handle()); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyHtoDAsync(%d bytes)", len(src)), r)
	}
	return nil
}

// CopyDtoHAsync queues a copy of src into dst (pinned host memory) on s.
func (d *Device) CopyDtoHAsync(dst []byte, src DevicePtr, s *Stream) error {
	if len(dst) == 0 {
		return nil
	}
	if r := C.gc_memcpy_dtoh_async(d.ctx, hostPtr(dst), C.CUdeviceptr(src), C.size_t(len(dst)), s.handle()); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyDtoHAsync(%d bytes)", len(dst)), r)
	}
	return nil
}

// CopyDtoDAsync queues a device-to-device copy of n bytes on s.
func (d *Device) CopyDtoDAsync(dst, src DevicePtr, n int, s *Stream) error {
	if n == 0 {
		return nil
	}
	if r := C.gc_memcpy_dtod_async(d.ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.handle()); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemcpyDtoDAsync(%d bytes)", n), r)
	}
	return nil
}

// HostAlloc allocates n bytes of pinned (page-locked) host memory, usable
// for fast and asynchronous copies with any device. Free it with HostFree.
func (d *Device) HostAlloc(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: HostAlloc of a negative size %d", n)
	}
	if n == 0 {
		return []byte{}, nil
	}
	var p unsafe.Pointer
	if r := C.gc_host_alloc(d.ctx, &p, C.size_t(n)); r != C.CUDA_SUCCESS {
		return nil, driverError(fmt.Sprintf("cuMemHostAlloc(%d bytes)", n), r)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// HostFree frees memory from HostAlloc.
func (d *Device) HostFree(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if r := C.gc_host_free(d.ctx, hostPtr(b)); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuMemFreeHost(%d bytes)", len(b)), r)
	}
	return nil
}
