// Package cuda is gocaffe's own thin binding to the CUDA driver API, cuBLAS
// and NVRTC. It is the only package that calls CUDA.
//
// The binding is compiled only with the `cuda` build tag, on a machine with
// the CUDA toolkit 12 or 13 (headers, libcuda, libcublas, libnvrtc; no nvcc
// is needed). Without the tag (the default, and what CI builds) every
// function here returns ErrNoCUDA, so code above can ask for the GPU and get
// a clear error instead of a link failure. Types that appear in other
// packages' signatures (DevicePtr, Device, Stream, Error) exist in both
// builds.
//
// # Contexts and threads
//
// A CUDA context is current per OS thread, and goroutines move between
// threads. This package never relies on a context being current: every C
// function it calls first makes the device's primary context current within
// the same cgo call, which runs on one OS thread from start to finish. So
// any goroutine may call any function here at any time; it costs one
// cuCtxSetCurrent (a thread-local store) per call.
//
// # Streams
//
// Each Device has a compute stream (Device.Stream) on which its cuBLAS
// handle and, by convention, gocaffe's kernels run. It is a blocking stream,
// so the synchronous copies (CopyHtoD, CopyDtoH, Memset), which run on the
// legacy default stream, are ordered after the compute work queued before
// them. Streams made with NewStream are non-blocking: work there (data
// prefetching) overlaps the compute stream and must be synchronised
// explicitly.
//
// # Memory
//
// Device and pinned host memory are not the garbage collector's: free them
// with Free and HostFree.
//
// # Kernels
//
// Device.Compile compiles CUDA C++ source with NVRTC for the device's own
// architecture (sm_XY) and caches the CUBIN on disk, keyed by the source,
// the options, the architecture and the driver and NVRTC versions, so a
// second start skips compilation. The cache lives in $GOCAFFE_CUDA_CACHE, or
// in the user cache directory under gocaffe/cuda; GOCAFFE_CUDA_CACHE=off
// disables it.
package cuda

import (
	"errors"
	"fmt"
)

// ErrNoCUDA is returned by every GPU operation in a build without the `cuda`
// tag.
var ErrNoCUDA = errors.New("cuda: gocaffe was built without CUDA support (rebuild with -tags cuda on a machine with the CUDA toolkit)")

// DevicePtr is an address in device memory, as the driver API's CUdeviceptr.
// The zero value is the null pointer.
type DevicePtr uintptr

// Add returns p advanced by n bytes.
func (p DevicePtr) Add(n int) DevicePtr { return p + DevicePtr(n) }

// Error is a failure reported by the CUDA driver, cuBLAS or NVRTC.
type Error struct {
	Lib  string // "CUDA", "cuBLAS" or "NVRTC"
	Call string // the call that failed, with what it was asked to do
	Code int    // the library's status code
	Name string // the library's name for it, e.g. CUDA_ERROR_OUT_OF_MEMORY
	Desc string // the library's description of it
	Log  string // the compiler log, for NVRTC compilation errors
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s failed: %s", e.Call, e.Name)
	if e.Desc != "" && e.Desc != e.Name {
		s += " (" + e.Desc + ")"
	}
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Op says whether a cuBLAS matrix operand is used as stored or transposed.
type Op int

// The two operand forms.
const (
	NoTrans Op = iota
	Trans
)

// Dim3 is a grid or block size. Zero Y and Z count as 1.
type Dim3 struct{ X, Y, Z int }

// Properties describes a device, as Caffe's device_query prints it.
type Properties struct {
	Ordinal                int
	Name                   string
	Major, Minor           int // compute capability
	TotalGlobalMem         uint64
	SharedMemPerBlock      int
	RegsPerBlock           int
	WarpSize               int
	MemPitch               int
	MaxThreadsPerBlock     int
	MaxThreadsDim          [3]int
	MaxGridSize            [3]int
	ClockRateKHz           int
	TotalConstMem          int
	TextureAlignment       int
	AsyncEngineCount       int // copy engines; > 0 means copies overlap kernels
	MultiProcessorCount    int
	KernelExecTimeout      bool
	L2CacheSize            int
	MemoryClockRateKHz     int
	MemoryBusWidth         int
	ECCEnabled             bool
	PCIDomain, PCIBus, PCI int
	DriverVersion          int // e.g. 13000 for CUDA 13.0
}
