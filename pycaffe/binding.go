//go:build python

package pycaffe

/*
#cgo pkg-config: python3
#include "pycaffe.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/layer"
)

func init() {
	// Python layers that no Go layer answers for run in Python from now
	// on, in every net of the process.
	layer.SetPythonRuntime(newPyLayer[float32], newPyLayer[float64])
}

// state is what pycaffe's module-level functions set: the mode and device
// of the nets made after them (Caffe's Caffe::set_mode, set_device), the
// seed, and the log level.
var state struct {
	sync.Mutex
	gpu      bool
	deviceID int
	contexts map[int]*device.Context // opened once per device
	seed     int64                   // -1: from the clock
	seeds    int64                   // nets and solvers seeded since set_random_seed
	logger   *slog.Logger
	level    *slog.LevelVar
	embedded bool // this process started the interpreter (the gocaffe command)
}

func init() {
	state.seed = -1
	state.level = new(slog.LevelVar)
	state.level.Set(slog.LevelWarn) // Caffe's glog shows warnings on stderr
	state.logger = slog.New(levelHandler{glog.NewHandler(os.Stderr), state.level})
}

// levelHandler is glog's handler with a minimum level: pycaffe writes
// Caffe's log lines to stderr from the level set_log_level chose.
type levelHandler struct {
	slog.Handler
	min *slog.LevelVar
}

func (h levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min.Level() }

// currentContext returns the device context of the nets made now: nil in CPU
// mode, the device set_device chose in GPU mode.
func currentContext() (*device.Context, error) {
	state.Lock()
	defer state.Unlock()
	if !state.gpu {
		return nil, nil
	}
	if c, ok := state.contexts[state.deviceID]; ok {
		return c, nil
	}
	c, err := device.Open(state.deviceID)
	if err != nil {
		if errors.Is(err, cuda.ErrNoCUDA) {
			return nil, errors.New("GPU mode: this caffe module was built without CUDA; python/build -tags cuda builds one that runs on the GPU (docs/python.md)")
		}
		return nil, fmt.Errorf("GPU mode: device %d: %w", state.deviceID, err)
	}
	if state.contexts == nil {
		state.contexts = map[int]*device.Context{}
	}
	state.contexts[state.deviceID] = c
	return c, nil
}

// nextSeed returns the seed of the next net or solver: after
// set_random_seed(s) the nets made in order get seeds drawn from s, so a
// script that seeds and then builds the same nets gets the same weights.
func nextSeed() int64 {
	state.Lock()
	defer state.Unlock()
	if state.seed < 0 {
		return -1
	}
	s := uint64(state.seed) + uint64(state.seeds)*0x9e3779b97f4a7c15
	state.seeds++
	return int64(s >> 1)
}

func logger() *slog.Logger {
	state.Lock()
	defer state.Unlock()
	return state.logger
}

// ---- handles --------------------------------------------------------------

// newHandle returns a handle of v for a capsule.
func newHandle(v any) C.uintptr_t { return C.uintptr_t(cgo.NewHandle(v)) }

// value returns the Go value of a handle Python passed.
func value(h C.uintptr_t) any { return cgo.Handle(h).Value() }

// closer is what a handle's value does when its capsule is freed.
type closer interface{ release() }

//export gcRelease
func gcRelease(h C.uintptr_t) {
	hd := cgo.Handle(h)
	v := hd.Value()
	hd.Delete()
	if c, ok := v.(closer); ok {
		c.release()
	}
}

// ---- errors ---------------------------------------------------------------

// PyError is a Python exception raised by Python code that gocaffe called
// (a Python layer, a solver callback). Error gives the exception's last
// line and the traceback, which is what the gocaffe command shows; when
// the error reaches Python again (a Python layer failing inside a net that
// Python runs) the exception itself is raised, with gocaffe's account of
// where as a note.
type PyError struct {
	Summary   string // "ValueError: Parameter string must be a legible float"
	Traceback string // the whole traceback, as Python prints it
	exc       [3]*C.PyObject
}

func (e *PyError) Error() string {
	if e.Traceback == "" {
		return e.Summary
	}
	return e.Summary + "\n" + strings.TrimRight(e.Traceback, "\n")
}

// pyError takes a caught exception from C.
func pyError(e *C.gc_pyerr) *PyError {
	pe := &PyError{exc: [3]*C.PyObject{e._type, e.value, e.tb}}
	if e.summary != nil {
		pe.Summary = strings.TrimSpace(C.GoString(e.summary))
		C.free(unsafe.Pointer(e.summary))
	}
	if e.text != nil {
		pe.Traceback = C.GoString(e.text)
		C.free(unsafe.Pointer(e.text))
	}
	return pe
}

// errorKind says which Python exception an error becomes: OSError for a
// file that is not there or cannot be read (Caffe's pycaffe raises
// IOError, the same class), RuntimeError otherwise.
func errorKind(err error) C.int {
	var pathErr *fs.PathError
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.As(err, &pathErr) {
		return C.GC_ERR_IO
	}
	var ie indexError
	if errors.As(err, &ie) {
		return C.GC_ERR_INDEX
	}
	return C.GC_ERR_RUNTIME
}

// indexError is an index out of range, IndexError in Python.
type indexError string

func (e indexError) Error() string { return string(e) }

// setError hands err to the module's function, which raises it.
func setError(e *C.gc_err, err error) {
	msg := err.Error()
	var pe *PyError
	if errors.As(err, &pe) && pe.exc[0] != nil {
		// The exception is raised again; the note is gocaffe's account of
		// where, without the traceback Python prints anyway.
		msg = strings.Replace(msg, pe.Error(), pe.Summary, 1)
		e._type, e.value, e.tb = pe.exc[0], pe.exc[1], pe.exc[2]
		pe.exc = [3]*C.PyObject{} // raised once: the references are Python's now
	}
	e.msg = C.CString(msg)
	e.kind = errorKind(err)
}

// guard runs f for a module function: its error, and a panic turned into
// one (a device failure, or a bug), go to e; it returns what C returns.
func guard(e *C.gc_err, f func() error) (rc C.int) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				buf := make([]byte, 8<<10)
				buf = buf[:runtime.Stack(buf, false)]
				err = fmt.Errorf("gocaffe: internal error (please report it): %v\n%s", r, buf)
			}
		}()
		defer device.Recover(&err) // runs first: a device failure is an error, not a bug
		return f()
	}()
	if err == nil {
		return 0
	}
	setError(e, err)
	return -1
}

// ---- calling Python ---------------------------------------------------------

// ensurePython starts an interpreter when the process has none: in the
// gocaffe command (pycaffe/embed), not inside Python, where the module was
// imported by a running one.
func ensurePython() error {
	pythonOnce.Do(func() {
		if C.gc_py_initialized() != 0 {
			return
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		setEmbedded(true) // the module made below reads it
		var msg *C.char
		if C.gc_embed_start(&msg) != 0 {
			setEmbedded(false)
			pythonErr = fmt.Errorf("starting Python: %s", C.GoString(msg))
			C.free(unsafe.Pointer(msg))
		}
	})
	return pythonErr
}

var (
	pythonOnce sync.Once
	pythonErr  error
)

// onPythonThread runs f, which calls into Python, locked to one thread:
// the C side's PyGILState_Ensure and Release must run on the same one.
func onPythonThread(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
}

func setEmbedded(on bool) {
	state.Lock()
	defer state.Unlock()
	state.embedded = on
}

//export gcEmbedded
func gcEmbedded() C.int {
	state.Lock()
	defer state.Unlock()
	if state.embedded {
		return 1
	}
	return 0
}
