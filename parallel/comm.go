// Package parallel holds what data-parallel training needs beyond one
// device: a communicator over the ranks of a job (one rank per GPU, or per
// CPU process), built on the engines the field uses rather than on
// collectives of our own: NCCL for GPU ranks (package cuda, `cuda` and
// `nccl` tags) and MPI for CPU ranks (package mpi, `mpi` tag). Neither is in
// the default build; there every constructor returns the library's
// "built without" error.
//
// Ranks find each other three ways:
//
//   - one process, several GPUs (gocaffe train -gpu 0,1 | all): NewNCCLGroup
//     makes one communicator of all, a rank per device, each driven by a
//     goroutine of its own;
//   - processes started by mpirun (or srun with PMI): NewMPI for CPU ranks;
//     NewNCCLOverMPI for GPU ranks, MPI carrying NCCL's unique id;
//   - processes started with the environment torchrun sets (RANK,
//     WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): NewNCCLFromEnv, a
//     small TCP rendezvous on MASTER_ADDR:MASTER_PORT carrying the id and,
//     for the rest of the run, noticing a rank that dies.
//
// The solver uses a Comm through Gradients and BroadcastParams; nets and
// layers know nothing of ranks, except that the Data layer reads its
// share of the records (device.Context.Shard), as Caffe's does.
package parallel

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// Buffer is memory a collective reads and writes in place: host elements,
// or elements in device memory.
type Buffer struct {
	f32    []float32
	f64    []float64
	dev    cuda.DevicePtr
	n      int // elements at dev
	double bool
}

// HostBuffer is the buffer of a host slice.
func HostBuffer[T blob.Float](s []T) Buffer {
	switch s := any(s).(type) {
	case []float32:
		return Buffer{f32: s, n: len(s)}
	case []float64:
		return Buffer{f64: s, n: len(s), double: true}
	}
	panic("unreachable")
}

// DeviceBuffer is the buffer of n elements of type T at p in device memory.
func DeviceBuffer[T blob.Float](p cuda.DevicePtr, n int) Buffer {
	var zero T
	_, double := any(zero).(float64)
	return Buffer{dev: p, n: n, double: double}
}

// Len returns the number of elements.
func (b Buffer) Len() int { return b.n }

// bytes returns the element size times the count.
func (b Buffer) bytes() int {
	if b.double {
		return 8 * b.n
	}
	return 4 * b.n
}

// Comm is one rank's view of the ranks of a data-parallel job. Every rank
// must make the same collective calls in the same order with buffers of
// the same lengths. A Comm is for one goroutine at a time.
type Comm interface {
	// Rank is this rank, in [0, Size).
	Rank() int
	// Size is the number of ranks.
	Size() int
	// Device is the GPU whose memory the collectives work on, or nil when
	// they work on host memory.
	Device() *cuda.Device
	// AllReduceSum replaces each buffer, on every rank, with the
	// element-wise sum over the ranks. On a GPU it is queued on the
	// device's compute stream, after the work queued there before.
	AllReduceSum(bufs []Buffer) error
	// Broadcast copies root's buffers into every other rank's.
	Broadcast(bufs []Buffer, root int) error
	// Barrier returns when every rank has called it.
	Barrier() error
	// Abort ends the job's communication at once, so that no rank waits
	// forever for this one; cause says why, for the log.
	Abort(cause error)
	// Close releases the communicator after a job that ended well, and
	// after the solvers using it are closed: a CUDA graph that recorded
	// its collectives holds an NCCL communicator, whose Close waits until
	// the graph is freed.
	Close() error
	// String names the engine and the rank, e.g. "NCCL rank 1 of 4".
	String() string
}

// describe is the String of the communicators here.
func describe(engine string, rank, size int) string {
	return fmt.Sprintf("%s rank %d of %d", engine, rank, size)
}
