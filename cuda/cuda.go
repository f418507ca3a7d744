// Package cuda is gocaffe's own thin binding to the CUDA driver API, cuBLAS
// and NVRTC. It is the only package that calls CUDA.
//
// The binding is compiled only with the `cuda` build tag, on a machine with
// the CUDA toolkit 12 or 13 (headers, libcuda, libcublas, libnvrtc; no nvcc
// is needed). Without the tag (the default, and what CI builds) the package
// declares the same API, every type, method and function, and each
// operation returns ErrNoCUDA (stubs generated from the tagged
// declarations, where alone the API is written: see api.go). So the GPU
// code of every other package compiles and is vetted in every build and
// decides at run time: no Device can be obtained, and code that asks for
// one gets a clear error instead of a link failure.
// This is the only package with cgo, and the only one with a `cuda` build
// tag.
//
// # Why cgo, and only here
//
// The binding calls the libraries through cgo, linked at build time. The
// alternatives were declaring the entry points ourselves and loading the
// libraries at run time (dlopen, or a no-cgo loader such as purego), which
// would let one binary serve CPU and GPU machines. We keep cgo because it is
// measured: a kernel launch through it costs 3.3 µs on the H100
// (BenchmarkLaunch), and no alternative has been measured faster; cgo checks every
// call's types against CUDA's own headers at build time, where hand-written
// declarations of a moving C API (CUDA 12 and 13 renamed and re-versioned
// entry points) would fail at run time instead. A loader would also put
// every call through a second trampoline whose cost is unmeasured. The C side
// (gocaffe_cuda.c) makes each call's context current in the same C call,
// which a run-time loader would have to reproduce call by call. Should one
// binary for both kinds of machine become a goal, the untagged API here is
// the seam: a loader-based build can replace the tagged files without
// touching any other package.
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
// second start skips compilation. The cache lives in the user cache
// directory under gocaffe/cuda, or where SetCacheDir says (the settings'
// CUDACache: GOCAFFE_CUDA_CACHE for the gocaffe command, off for none).
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

// BlasType is the element type of a matrix in Blas.GemmEx: CUDA's
// cudaDataType values.
type BlasType int

// The element types of Blas.GemmEx.
const (
	BlasFloat    BlasType = 0  // CUDA_R_32F
	BlasHalf     BlasType = 2  // CUDA_R_16F
	BlasBFloat16 BlasType = 14 // CUDA_R_16BF
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
