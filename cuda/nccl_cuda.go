//go:build cuda && nccl

package cuda

/*
#cgo LDFLAGS: -lnccl
#include <string.h>
#include <nccl.h>
#include "gocaffe_cuda.h"

static int gc_nccl_version(int *v) { return ncclGetVersion(v); }
static int gc_nccl_get_unique_id(void *id) {
	ncclUniqueId u;
	ncclResult_t r = ncclGetUniqueId(&u);
	memcpy(id, &u, sizeof u);
	return r;
}
// Every NCCL call that touches a device makes its primary context current
// first, in the same C call, as the rest of the binding does: NCCL's
// runtime calls then find it.
static int gc_nccl_init_rank(CUcontext c, ncclComm_t *comm, int size, const void *id, int rank) {
	if (cuCtxSetCurrent(c) != CUDA_SUCCESS) return -1;
	ncclUniqueId u;
	memcpy(&u, id, sizeof u);
	return ncclCommInitRank(comm, size, u, rank);
}
static int gc_nccl_init_all(ncclComm_t *comms, int n, const int *ordinals) {
	return ncclCommInitAll(comms, n, ordinals);
}
static int gc_nccl_group_start(void) { return ncclGroupStart(); }
static int gc_nccl_group_end(void) { return ncclGroupEnd(); }
static int gc_nccl_allreduce(CUcontext c, ncclComm_t comm, CUdeviceptr buf, size_t n, int f64, CUstream s) {
	if (cuCtxSetCurrent(c) != CUDA_SUCCESS) return -1;
	return ncclAllReduce((const void *)buf, (void *)buf, n, f64 ? ncclFloat64 : ncclFloat32, ncclSum, comm, (cudaStream_t)s);
}
static int gc_nccl_allreduce_avg(CUcontext c, ncclComm_t comm, CUdeviceptr buf, size_t n, int f64, CUstream s) {
	if (cuCtxSetCurrent(c) != CUDA_SUCCESS) return -1;
	return ncclAllReduce((const void *)buf, (void *)buf, n, f64 ? ncclFloat64 : ncclFloat32, ncclAvg, comm, (cudaStream_t)s);
}
static int gc_nccl_bcast(CUcontext c, ncclComm_t comm, CUdeviceptr buf, size_t bytes, int root, CUstream s) {
	if (cuCtxSetCurrent(c) != CUDA_SUCCESS) return -1;
	return ncclBroadcast((const void *)buf, (void *)buf, bytes, ncclUint8, root, comm, (cudaStream_t)s);
}
static int gc_nccl_async_error(ncclComm_t comm, int *e) {
	ncclResult_t r;
	int s = ncclCommGetAsyncError(comm, &r);
	*e = r;
	return s;
}
static int gc_nccl_abort(CUcontext c, ncclComm_t comm) {
	cuCtxSetCurrent(c);
	return ncclCommAbort(comm);
}
static int gc_nccl_destroy(CUcontext c, ncclComm_t comm) {
	cuCtxSetCurrent(c);
	return ncclCommDestroy(comm);
}
static const char *gc_nccl_error_string(int r) {
	if (r == -1) return "could not make the device's context current";
	return ncclGetErrorString((ncclResult_t)r);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

func ncclError(call string, r C.int) error {
	if r == 0 { // ncclSuccess
		return nil
	}
	msg := C.GoString(C.gc_nccl_error_string(r))
	return &Error{Lib: "NCCL", Call: call, Code: int(r), Name: msg}
}

// NCCLAvailable reports whether this build has NCCL.
func NCCLAvailable() bool { return true }

// NCCLVersion returns the NCCL library's version code (e.g. 22805 for
// 2.28.5).
func NCCLVersion() (int, error) {
	var v C.int
	return int(v), ncclError("ncclGetVersion", C.gc_nccl_version(&v))
}

// NCCLGetUniqueID makes the token of a new communicator (on rank 0).
func NCCLGetUniqueID() (NCCLUniqueID, error) {
	var id NCCLUniqueID
	r := C.gc_nccl_get_unique_id(unsafe.Pointer(&id[0]))
	return id, ncclError("ncclGetUniqueId", r)
}

// NCCLComm is one rank's handle of an NCCL communicator, on one device.
// It is for one goroutine at a time.
type NCCLComm struct {
	dev        *Device
	c          C.ncclComm_t
	rank, size int
}

// NewNCCLComm joins rank (of size ranks) of the communicator id names, on
// d. Every rank must call it at about the same time: it returns when all
// have joined.
func NewNCCLComm(d *Device, id NCCLUniqueID, rank, size int) (*NCCLComm, error) {
	c := &NCCLComm{dev: d, rank: rank, size: size}
	r := C.gc_nccl_init_rank(d.ctx, &c.c, C.int(size), unsafe.Pointer(&id[0]), C.int(rank))
	if err := ncclError(fmt.Sprintf("ncclCommInitRank(rank %d of %d, device %d)", rank, size, d.ordinal), r); err != nil {
		return nil, err
	}
	return c, nil
}

// NewNCCLComms makes one communicator over devs, one rank per device in
// order, for a single process that drives them all (ncclCommInitAll).
func NewNCCLComms(devs []*Device) ([]*NCCLComm, error) {
	ords := make([]C.int, len(devs))
	for i, d := range devs {
		ords[i] = C.int(d.ordinal)
	}
	cs := make([]C.ncclComm_t, len(devs))
	if len(devs) == 0 {
		return nil, nil
	}
	if err := ncclError(fmt.Sprintf("ncclCommInitAll(%d devices)", len(devs)), C.gc_nccl_init_all(&cs[0], C.int(len(devs)), &ords[0])); err != nil {
		return nil, err
	}
	out := make([]*NCCLComm, len(devs))
	for i, d := range devs {
		out[i] = &NCCLComm{dev: d, c: cs[i], rank: i, size: len(devs)}
	}
	return out, nil
}

// Rank returns the communicator rank of this handle.
func (c *NCCLComm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *NCCLComm) Size() int { return c.size }

// Device returns the handle's device.
func (c *NCCLComm) Device() *Device { return c.dev }

// AllReduceSum queues, on s, the in-place element-wise sum over all ranks
// of n float32 (or float64 when double) elements at buf.
func (c *NCCLComm) AllReduceSum(buf DevicePtr, n int, double bool, s *Stream) error {
	f64 := C.int(0)
	if double {
		f64 = 1
	}
	return ncclError("ncclAllReduce", C.gc_nccl_allreduce(c.dev.ctx, c.c, dp(buf), C.size_t(n), f64, s.handle()))
}

// AllReduceMean queues, on s, the in-place element-wise mean over all
// ranks of n float32 (or float64 when double) elements at buf: NCCL's
// ncclAvg, which divides inside the collective instead of in a kernel of
// its own afterwards.
func (c *NCCLComm) AllReduceMean(buf DevicePtr, n int, double bool, s *Stream) error {
	f64 := C.int(0)
	if double {
		f64 = 1
	}
	return ncclError("ncclAllReduce", C.gc_nccl_allreduce_avg(c.dev.ctx, c.c, dp(buf), C.size_t(n), f64, s.handle()))
}

// Broadcast queues, on s, the copy of root's bytes at buf to every other
// rank's buf.
func (c *NCCLComm) Broadcast(buf DevicePtr, bytes, root int, s *Stream) error {
	return ncclError("ncclBroadcast", C.gc_nccl_bcast(c.dev.ctx, c.c, dp(buf), C.size_t(bytes), C.int(root), s.handle()))
}

// AsyncError returns the error a collective of the communicator met after
// it was queued (a peer that died, a network failure), nil if none.
func (c *NCCLComm) AsyncError() error {
	var e C.int
	if err := ncclError("ncclCommGetAsyncError", C.gc_nccl_async_error(c.c, &e)); err != nil {
		return err
	}
	return ncclError("a queued collective", e)
}

// Abort ends the communicator at once, cancelling queued collectives, so
// that a rank waiting for a dead peer stops waiting.
func (c *NCCLComm) Abort() error {
	return ncclError("ncclCommAbort", C.gc_nccl_abort(c.dev.ctx, c.c))
}

// Close frees the communicator after its work has finished.
func (c *NCCLComm) Close() error {
	return ncclError("ncclCommDestroy", C.gc_nccl_destroy(c.dev.ctx, c.c))
}

// NCCLGroup runs f, whose collectives on several communicators are then
// launched together (ncclGroupStart/End): a single goroutine driving
// several devices must group their collectives, or the first waits for the
// others forever. The goroutine stays on its thread meanwhile: NCCL keeps
// a group's state per thread, and a goroutine whose cgo call outlasts its
// processor's hold can resume on another thread, whose ncclGroupEnd then
// fails with "invalid usage" (seen once on 2x H100, in a one-process job's
// broadcast of the parameters).
func NCCLGroup(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := ncclError("ncclGroupStart", C.gc_nccl_group_start()); err != nil {
		return err
	}
	ferr := f()
	if err := ncclError("ncclGroupEnd", C.gc_nccl_group_end()); err != nil && ferr == nil {
		ferr = err
	}
	return ferr
}
