// Package pycaffe is gocaffe's binding to CPython: the extension module
// caffe._caffe under the Python package caffe (python/caffe), which gives
// Caffe's Python interface (pycaffe) on gocaffe, and the runtime of Python
// layers, through which a net runs layer classes written in Python.
//
// It is cgo over Python's C API and builds only with the python tag
// (Debian's python3-dev); without the tag the package is this file alone,
// so the default build stays pure Go. python/build makes the module, a
// shared library (-buildmode=c-shared, package pycaffe/extension), and the
// protobuf code of the Python package; the gocaffe command built with the
// tag links Python and imports package pycaffe/embed, and then runs the
// Python layers of the nets it trains. docs/python.md is the user's guide.
//
// # Memory
//
// A blob's .data and .diff in Python are numpy arrays over the blob's host
// memory itself, as in Caffe: the binding hands numpy (through the buffer
// protocol) the pointer that MutableCPUData returns, so writing the array
// writes the blob, and the SyncedMemory state machine moves the head to
// the host as Caffe's mutable_cpu_data does. That memory is the Go heap's
// on the CPU (SyncedMemory allocates it with make) and page-locked CUDA
// memory in GPU mode. Go's rules for cgo forbid C to keep a Go pointer
// after a call returns unless the memory is pinned, so each view pins it
// with a runtime.Pinner (a no-op for the CUDA memory) and holds the
// SyncedMemory itself, whose cleanup would otherwise free the CUDA
// memory once the blob let go of it (a reshape that grows the blob); the
// view's release unpins. The garbage collector does not move heap
// objects, but pinning is what makes the pointer C's to keep. Nothing is
// copied, and no allocator of the blob package changes for Python.
//
// # Objects and lifetimes
//
// Every Go object Python holds (a net, a solver, a blob, a Python layer's
// Go side, a view's pin) is a cgo.Handle inside a capsule, and freeing the
// capsule releases the handle (gcRelease). The Python objects hold each
// other as Caffe's shared pointers do: an array holds its view, the view
// its Blob, the Blob its Net, a solver's Net its Solver, so a net is
// closed (Net.Close: its data layers' goroutines, its device memory) only
// when nothing in Python can reach its memory any more.
//
// # Threads and the GIL
//
// Calls from Python run with the GIL held, as pycaffe's do: a net runs its
// layers on the calling goroutine, so a Python layer called back from Go
// is on the thread that holds the GIL, and its PyGILState_Ensure nests. In
// the gocaffe command the interpreter is started on first use and its GIL
// released at once; each call into Python takes it on whatever thread
// Go is running, locked to that thread for the call.
package pycaffe
