package parallel

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mpi"
)

// ncclComm is a GPU rank: collectives on device memory, queued on the
// device's compute stream so that they follow the backward pass and
// precede the update with no host synchronisation.
type ncclComm struct {
	// mu orders the calls into NCCL with Abort, which may come from
	// another goroutine (the rendezvous's watchdog, or a failed rank's):
	// once aborted, the handle is gone and every call fails instead.
	mu      sync.Mutex
	aborted error

	c       *cuda.NCCLComm
	ctx     *device.Context
	scratch cuda.DevicePtr // one float for Barrier
	watch   *watchdog      // the TCP rendezvous's liveness watch, if any
}

func newNCCLComm(c *cuda.NCCLComm, ctx *device.Context) *ncclComm {
	return &ncclComm{c: c, ctx: ctx}
}

// NewNCCLGroup makes one communicator over the GPUs of ctxs, in one
// process: rank i runs on ctxs[i], driven by a goroutine of its own.
func NewNCCLGroup(ctxs []*device.Context) ([]Comm, error) {
	devs := make([]*cuda.Device, len(ctxs))
	for i, c := range ctxs {
		if !c.OnGPU() {
			return nil, fmt.Errorf("parallel: rank %d has no GPU: NCCL ranks run on GPUs", i)
		}
		devs[i] = c.Device()
	}
	cs, err := cuda.NewNCCLComms(devs)
	if err != nil {
		return nil, err
	}
	out := make([]Comm, len(cs))
	for i, c := range cs {
		out[i] = newNCCLComm(c, ctxs[i])
	}
	return out, nil
}

// NewNCCLOverMPI joins, as a GPU rank on ctx, an NCCL communicator over the
// ranks of the MPI job this process runs in; MPI carries the unique id from
// rank 0. It needs the `mpi` tag as well as `cuda` and `nccl`.
func NewNCCLOverMPI(ctx *device.Context) (Comm, error) {
	if !ctx.OnGPU() {
		return nil, errors.New("parallel: NCCL ranks run on GPUs")
	}
	rank, size, err := mpi.Init()
	if err != nil {
		return nil, err
	}
	var id cuda.NCCLUniqueID
	if rank == 0 {
		if id, err = cuda.NCCLGetUniqueID(); err != nil {
			return nil, err
		}
	}
	if err := mpi.Broadcast(id[:], 0); err != nil {
		return nil, err
	}
	c, err := cuda.NewNCCLComm(ctx.Device(), id, rank, size)
	if err != nil {
		return nil, err
	}
	return newNCCLComm(c, ctx), nil
}

func (c *ncclComm) Rank() int            { return c.c.Rank() }
func (c *ncclComm) Size() int            { return c.c.Size() }
func (c *ncclComm) Device() *cuda.Device { return c.ctx.Device() }
func (c *ncclComm) String() string       { return describe("NCCL", c.Rank(), c.Size()) }

// usable returns why the communicator can no longer be used, if it cannot;
// c.mu is held.
func (c *ncclComm) usable() error {
	if c.aborted != nil {
		return c.aborted
	}
	return c.watch.err()
}

func (c *ncclComm) AllReduceSum(bufs []Buffer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	return cuda.NCCLGroup(func() error {
		for _, b := range bufs {
			if b.f32 != nil || b.f64 != nil {
				return errHostBuffer
			}
			if err := c.c.AllReduceSum(b.dev, b.n, b.double, c.ctx.Stream()); err != nil {
				return err
			}
		}
		return nil
	})
}

var errHostBuffer = errors.New("parallel: a host buffer given to NCCL, which works on device memory")

func (c *ncclComm) Broadcast(bufs []Buffer, root int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	return cuda.NCCLGroup(func() error {
		for _, b := range bufs {
			if b.f32 != nil || b.f64 != nil {
				return errHostBuffer
			}
			if err := c.c.Broadcast(b.dev, b.bytes(), root, c.ctx.Stream()); err != nil {
				return err
			}
		}
		return nil
	})
}

// Barrier all-reduces one float and waits for it.
func (c *ncclComm) Barrier() error {
	if c.scratch == 0 {
		p, err := c.ctx.Device().Alloc(4)
		if err != nil {
			return err
		}
		c.scratch = p
	}
	if err := c.AllReduceSum([]Buffer{{dev: c.scratch, n: 1}}); err != nil {
		return err
	}
	if err := c.ctx.Synchronize(); err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.aborted != nil {
			return errors.Join(err, c.aborted)
		}
		return errors.Join(err, c.c.AsyncError())
	}
	return nil
}

// Abort ends the communicator: queued collectives are cancelled, so that
// a wait for a dead peer ends, and later calls fail with cause.
func (c *ncclComm) Abort(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted != nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%v: aborting: %v\n", c, cause)
	c.aborted = fmt.Errorf("%v was aborted: %w", c, cause)
	c.c.Abort()
	c.watch.close(false)
}

func (c *ncclComm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted != nil {
		return nil // Abort freed it
	}
	var err error
	if c.scratch != 0 {
		err = c.ctx.Device().Free(c.scratch)
	}
	c.watch.close(true)
	return errors.Join(err, c.c.Close())
}

// allReduceMeanOn queues on s, a stream of the comm's device, the mean
// over the ranks of n elements at p: a gradient bucket's all-reduce, on
// the stream that runs them beside the backward pass.
func (c *ncclComm) allReduceMeanOn(p cuda.DevicePtr, n int, double bool, s *cuda.Stream) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	return c.c.AllReduceMean(p, n, double, s)
}

// check returns why the communicator can no longer be used, or the error
// a queued collective met, nil if neither: for work that reaches NCCL
// without a call here, a CUDA graph's replayed collectives.
func (c *ncclComm) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	return c.c.AsyncError()
}
