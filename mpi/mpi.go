//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <mpi.h>

static int gc_mpi_init(int *provided) {
	int inited = 0;
	MPI_Initialized(&inited);
	if (inited) {
		return MPI_Query_thread(provided);
	}
	int r = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (r != MPI_SUCCESS) return r;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int gc_mpi_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int gc_mpi_size(int *n) { return MPI_Comm_size(MPI_COMM_WORLD, n); }
static int gc_mpi_allreduce_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int gc_mpi_allreduce_f64(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int gc_mpi_bcast_bytes(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}
static int gc_mpi_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int gc_mpi_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int gc_mpi_finalize(void) {
	int fin = 0;
	MPI_Finalized(&fin);
	return fin ? MPI_SUCCESS : MPI_Finalize();
}
static void gc_mpi_error_string(int code, char *s, int *len) { MPI_Error_string(code, s, len); }
static int gc_mpi_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
static int gc_mpi_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
*/
import "C"

import (
	"sync"
	"unsafe"
)

// mu serialises every MPI call (MPI_THREAD_SERIALIZED).
var mu sync.Mutex

func check(call string, r C.int) error {
	if r == 0 { // MPI_SUCCESS
		return nil
	}
	buf := make([]byte, int(C.gc_mpi_max_error_string()))
	var n C.int
	C.gc_mpi_error_string(r, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return &Error{Call: call, Code: int(r), Msg: string(buf[:n])}
}

// Available reports whether this build has MPI.
func Available() bool { return true }

// Init initialises MPI once per process (later calls do nothing) and
// returns this process's rank and the number of ranks in MPI_COMM_WORLD.
// The MPI implementation must provide MPI_THREAD_SERIALIZED.
func Init() (rank, size int, err error) {
	mu.Lock()
	defer mu.Unlock()
	var provided, r, n C.int
	if err := check("MPI_Init_thread", C.gc_mpi_init(&provided)); err != nil {
		return 0, 0, err
	}
	if provided < C.gc_mpi_thread_serialized() {
		return 0, 0, &Error{Call: "MPI_Init_thread", Msg: "the MPI library does not provide MPI_THREAD_SERIALIZED"}
	}
	if err := check("MPI_Comm_rank", C.gc_mpi_rank(&r)); err != nil {
		return 0, 0, err
	}
	if err := check("MPI_Comm_size", C.gc_mpi_size(&n)); err != nil {
		return 0, 0, err
	}
	return int(r), int(n), nil
}

// AllReduceSum replaces buf, on every rank, with the element-wise sum of
// every rank's buf (MPI_Allreduce in place). Every rank must call it with
// the same length.
func AllReduceSum[T float32 | float64](buf []T) error {
	if len(buf) == 0 {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	for len(buf) > 0 { // MPI counts are ints
		n := min(len(buf), 1<<30)
		var r C.int
		switch b := any(buf[:n]).(type) {
		case []float32:
			r = C.gc_mpi_allreduce_f32((*C.float)(unsafe.Pointer(&b[0])), C.int(n))
		case []float64:
			r = C.gc_mpi_allreduce_f64((*C.double)(unsafe.Pointer(&b[0])), C.int(n))
		}
		if err := check("MPI_Allreduce", r); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// Broadcast copies root's buf into every other rank's buf (MPI_Bcast).
func Broadcast(buf []byte, root int) error {
	if len(buf) == 0 {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	for len(buf) > 0 {
		n := min(len(buf), 1<<30)
		if err := check("MPI_Bcast", C.gc_mpi_bcast_bytes(unsafe.Pointer(&buf[0]), C.int(n), C.int(root))); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// Barrier returns when every rank has called it.
func Barrier() error {
	mu.Lock()
	defer mu.Unlock()
	return check("MPI_Barrier", C.gc_mpi_barrier())
}

// Abort ends every rank of MPI_COMM_WORLD with the exit code (the
// launcher then stops the job); it does not return on success.
func Abort(code int) error {
	return check("MPI_Abort", C.gc_mpi_abort(C.int(code)))
}

// Finalize shuts MPI down; no call may follow it. It does nothing if MPI
// is already finalized.
func Finalize() error {
	mu.Lock()
	defer mu.Unlock()
	return check("MPI_Finalize", C.gc_mpi_finalize())
}
