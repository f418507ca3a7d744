package parallel

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// deviceBuffer returns the buffer of b's data or diff where comm works:
// host memory, or the comm's device.
func deviceBuffer[T blob.Float](comm Comm, b *blob.Blob[T], diff bool) (Buffer, error) {
	if comm.Device() == nil {
		if diff {
			return HostBuffer(b.MutableCPUDiff()), nil
		}
		return HostBuffer(b.MutableCPUData()), nil
	}
	var p cuda.DevicePtr
	var err error
	if diff {
		p, err = b.MutableGPUDiff()
	} else {
		p, err = b.MutableGPUData()
	}
	return DeviceBuffer[T](p, b.Count()), err
}

// Gradients averages the learnable parameters' gradients over the ranks:
// each rank's diffs are summed by the communicator and divided by the
// number of ranks, as Caffe's multi-GPU solvers do after every backward
// pass (its on_gradients_ready). Each rank ran the net's batch, so the
// update is that of one solver with the batch times the number of ranks.
type Gradients[T blob.Float] struct {
	comm   Comm
	params []*blob.Blob[T]
	bufs   []Buffer // reused: Reduce allocates nothing
}

// NewGradients returns the averaging of params' diffs over comm's ranks.
// params must be the same learnable blobs, in the same order, on every
// rank.
func NewGradients[T blob.Float](comm Comm, params []*blob.Blob[T]) *Gradients[T] {
	return &Gradients[T]{comm: comm, params: params, bufs: make([]Buffer, 0, len(params))}
}

// Reduce replaces every parameter's diff with the mean over the ranks.
func (g *Gradients[T]) Reduce() error {
	g.bufs = g.bufs[:0]
	for _, p := range g.params {
		b, err := deviceBuffer(g.comm, p, true)
		if err != nil {
			return err
		}
		g.bufs = append(g.bufs, b)
	}
	if err := g.comm.AllReduceSum(g.bufs); err != nil {
		return fmt.Errorf("%v: all-reduce of the gradients: %w", g.comm, err)
	}
	if n := g.comm.Size(); n > 1 {
		for _, p := range g.params {
			p.ScaleDiff(1 / T(n))
		}
	}
	return nil
}

// BroadcastData copies rank 0's values of blobs into every other rank's:
// at the start of a run, so that every rank starts from rank 0's weights
// (filled from its seed, or loaded from its files).
func BroadcastData[T blob.Float](comm Comm, blobs []*blob.Blob[T]) error {
	bufs := make([]Buffer, 0, len(blobs))
	for _, b := range blobs {
		buf, err := deviceBuffer(comm, b, false)
		if err != nil {
			return err
		}
		bufs = append(bufs, buf)
	}
	if err := comm.Broadcast(bufs, 0); err != nil {
		return fmt.Errorf("%v: broadcast of rank 0's parameters: %w", comm, err)
	}
	return nil
}

// Agree combines one small integer request per rank (a bit set, e.g. stop
// and snapshot requests) into their union on every rank, so that all ranks
// take the same action at the same iteration. It reads the result on the
// host, which waits for the device: call it where the solver reads values
// anyway.
type Agree struct {
	comm Comm
	host []float32
	dev  cuda.DevicePtr
}

// NewAgree returns the agreement of comm's ranks on bit sets of up to
// bits bits.
func NewAgree(comm Comm, bits int) *Agree {
	return &Agree{comm: comm, host: make([]float32, bits)}
}

// Union returns the union of every rank's request bits.
func (a *Agree) Union(bits uint) (uint, error) {
	for i := range a.host {
		a.host[i] = float32(bits >> i & 1)
	}
	if err := a.reduce(); err != nil {
		return 0, fmt.Errorf("%v: agreeing on requests: %w", a.comm, err)
	}
	var out uint
	for i, v := range a.host {
		if v > 0 {
			out |= 1 << i
		}
	}
	return out, nil
}

func (a *Agree) reduce() error {
	d := a.comm.Device()
	if d == nil {
		return a.comm.AllReduceSum([]Buffer{HostBuffer(a.host)})
	}
	raw := float32Bytes(a.host)
	if a.dev == 0 {
		p, err := d.Alloc(len(raw))
		if err != nil {
			return err
		}
		a.dev = p
	}
	// The synchronous copies run on the legacy stream, which the blocking
	// compute stream orders: the all-reduce between them is queued there.
	if err := d.CopyHtoD(a.dev, raw); err != nil {
		return err
	}
	if err := a.comm.AllReduceSum([]Buffer{DeviceBuffer[float32](a.dev, len(a.host))}); err != nil {
		return err
	}
	return d.CopyDtoH(raw, a.dev)
}

// Close frees the agreement's device memory.
func (a *Agree) Close() error {
	if a.dev == 0 {
		return nil
	}
	p := a.dev
	a.dev = 0
	return a.comm.Device().Free(p)
}
