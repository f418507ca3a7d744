package parallel

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mpi"
)

// mpiComm is a CPU rank of an MPI job: collectives on host memory.
type mpiComm struct{ rank, size int }

// NewMPI joins the MPI job this process was started in (by mpirun, mpiexec
// or srun) as a CPU rank. Without the `mpi` tag it returns mpi.ErrNoMPI.
func NewMPI() (Comm, error) {
	rank, size, err := mpi.Init()
	if err != nil {
		return nil, err
	}
	return &mpiComm{rank: rank, size: size}, nil
}

func (c *mpiComm) Rank() int            { return c.rank }
func (c *mpiComm) Size() int            { return c.size }
func (c *mpiComm) Device() *cuda.Device { return nil }
func (c *mpiComm) String() string       { return describe("MPI", c.rank, c.size) }

func (c *mpiComm) AllReduceSum(bufs []Buffer) error {
	for _, b := range bufs {
		var err error
		switch {
		case b.f32 != nil:
			err = mpi.AllReduceSum(b.f32)
		case b.f64 != nil:
			err = mpi.AllReduceSum(b.f64)
		case b.n > 0:
			err = errDeviceBuffer
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var errDeviceBuffer = fmt.Errorf("parallel: a device buffer given to MPI, which works on host memory")

func (c *mpiComm) Broadcast(bufs []Buffer, root int) error {
	for _, b := range bufs {
		var raw []byte
		switch {
		case b.f32 != nil:
			raw = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f32))), 4*len(b.f32))
		case b.f64 != nil:
			raw = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f64))), 8*len(b.f64))
		case b.n > 0:
			return errDeviceBuffer
		}
		if err := mpi.Broadcast(raw, root); err != nil {
			return err
		}
	}
	return nil
}

func (c *mpiComm) Barrier() error { return mpi.Barrier() }

// Abort ends every rank: MPI_Abort makes the launcher stop the job.
func (c *mpiComm) Abort(cause error) {
	fmt.Fprintf(os.Stderr, "%v: aborting the MPI job: %v\n", c, cause)
	mpi.Abort(1)
}

func (c *mpiComm) Close() error { return mpi.Finalize() }

// float32Bytes views s as its bytes.
func float32Bytes(s []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}
