//go:build cuda

package cuda

/*
#cgo noescape gc_nvrtc_compile
#cgo noescape gc_nvrtc_version
#cgo noescape gc_module_load
#cgo noescape gc_module_function
#cgo noescape gc_launch
#cgo nocallback gc_launch
#include <stdlib.h>
#include "gocaffe_cuda.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// nvrtcCompiles counts NVRTC compilations (for the cache tests).
var nvrtcCompiles atomic.Int64

// Module is compiled device code loaded on a device.
type Module struct {
	dev  *Device
	name string
	mod  C.CUmodule

	mu    sync.Mutex
	funcs map[string]*Function
}

// Function is a kernel of a Module.
type Function struct {
	mod  *Module
	name string
	f    C.CUfunction
}

// nvrtcError turns an NVRTC result into an *Error.
func nvrtcError(call string, r C.int, log string) error {
	if r == 0 {
		return nil
	}
	name := C.GoString(C.gc_nvrtc_error_string(r))
	return &Error{Lib: "NVRTC", Call: call, Code: int(r), Name: name, Log: log}
}

// nvrtcVersion returns NVRTC's version as "major.minor".
func nvrtcVersion() (string, error) {
	var major, minor C.int
	if err := nvrtcError("nvrtcVersion", C.gc_nvrtc_version(&major, &minor), ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", major, minor), nil
}

// Compile compiles CUDA C++ source with NVRTC for this device's
// architecture and loads it. name labels the program in errors and logs.
// The result is cached in memory per device and on disk (see the package
// documentation), so compiling the same source again is cheap. Kernels meant
// to be found by Function should be declared extern "C".
func (d *Device) Compile(name, source string) (*Module, error) {
	arch := fmt.Sprintf("sm_%d%d", d.major, d.minor)
	opts := []string{"--gpu-architecture=" + arch, "--std=c++17"}
	key, err := cacheKey(source, opts)
	if err != nil {
		return nil, err
	}
	d.modMu.Lock()
	defer d.modMu.Unlock()
	if m, ok := d.modules[key]; ok {
		return m, nil
	}
	cubin, cached := readCache(key)
	if cached {
		if m, err := d.load(name, cubin); err == nil {
			d.modules[key] = m
			return m, nil
		}
		// A corrupt or stale cache entry: compile afresh below.
	}
	cubin, err = compileNVRTC(name, arch, source, opts)
	if err != nil {
		return nil, err
	}
	m, err := d.load(name, cubin)
	if err != nil {
		return nil, err
	}
	writeCache(key, cubin)
	d.modules[key] = m
	return m, nil
}

// compileNVRTC compiles source to a CUBIN.
func compileNVRTC(name, arch, source string, opts []string) ([]byte, error) {
	csrc, cname := C.CString(source), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	copts := C.malloc(C.size_t(len(opts)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(copts)
	optv := unsafe.Slice((**C.char)(copts), len(opts))
	for i, o := range opts {
		optv[i] = C.CString(o)
		defer C.free(unsafe.Pointer(optv[i]))
	}
	var log, cubin *C.char
	var logSize, cubinSize C.size_t
	nvrtcCompiles.Add(1)
	r := C.gc_nvrtc_compile(csrc, cname, (**C.char)(copts), C.int(len(opts)), &log, &logSize, &cubin, &cubinSize)
	defer C.free(unsafe.Pointer(log))
	defer C.free(unsafe.Pointer(cubin))
	logText := strings.TrimSpace(C.GoStringN(log, C.int(logSize)))
	if err := nvrtcError(fmt.Sprintf("nvrtcCompileProgram(%s for %s)", name, arch), r, logText); err != nil {
		return nil, err
	}
	return C.GoBytes(unsafe.Pointer(cubin), C.int(cubinSize)), nil
}

// load loads a CUBIN image on the device.
func (d *Device) load(name string, cubin []byte) (*Module, error) {
	img := C.CBytes(cubin)
	defer C.free(img)
	m := &Module{dev: d, name: name, funcs: map[string]*Function{}}
	if err := driverError(fmt.Sprintf("cuModuleLoadData(%s on device %d)", name, d.ordinal), C.gc_module_load(d.ctx, &m.mod, img)); err != nil {
		return nil, err
	}
	return m, nil
}

// Function returns the kernel called name.
func (m *Module) Function(name string) (*Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.funcs[name]; ok {
		return f, nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	f := &Function{mod: m, name: name}
	if err := driverError(fmt.Sprintf("cuModuleGetFunction(%s in %s)", name, m.name), C.gc_module_function(m.dev.ctx, &f.f, m.mod, cname)); err != nil {
		return nil, err
	}
	m.funcs[name] = f
	return f, nil
}

func dim(v int) C.uint {
	if v <= 0 {
		return 1
	}
	return C.uint(v)
}

// Launch queues the kernel on stream s (the device's compute stream if s is
// nil) with the given grid, block, dynamic shared memory and arguments.
func (f *Function) Launch(grid, block Dim3, sharedMem int, s *Stream, args *Args) error {
	if s == nil {
		s = f.mod.dev.stream
	}
	r := C.gc_launch(f.mod.dev.ctx, f.f, dim(grid.X), dim(grid.Y), dim(grid.Z), dim(block.X), dim(block.Y), dim(block.Z),
		C.uint(sharedMem), s.s, (*C.ulonglong)(unsafe.Pointer(&args.slots[0])), (*C.int)(unsafe.Pointer(&args.off[0])), C.int(args.n))
	if r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("cuLaunchKernel(%s, grid %v, block %v)", f.name, grid, block), r)
	}
	return nil
}

// cacheKey identifies a compilation: the same source, options, driver and
// compiler give the same CUBIN. The architecture is among the options.
func cacheKey(source string, opts []string) (string, error) {
	drv, err := DriverVersion()
	if err != nil {
		return "", err
	}
	nv, err := nvrtcVersion()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "driver %d\nnvrtc %s\noptions %q\n", drv, nv, opts)
	h.Write([]byte(source))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func readCache(key string) ([]byte, bool) {
	dir := CacheDir()
	if dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, key+".cubin"))
	return b, err == nil && len(b) > 0
}

// writeCache stores a CUBIN through a temporary file and a rename, so that a
// concurrent reader never sees half a file. Failing to cache only costs the
// next start a compilation, so errors are ignored.
func writeCache(key string, cubin []byte) {
	dir := CacheDir()
	if dir == "" || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(dir, key+".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(cubin)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, key+".cubin")) != nil {
		os.Remove(f.Name())
	}
}
