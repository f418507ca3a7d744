package parallel

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// Bucket sizes, PyTorch DDP's: the first bucket, which the backward pass
// completes first (the last layers'), is small so that communication
// starts early; the others are large enough that each all-reduce runs
// near the link's bandwidth. A net whose gradients fit in the first
// bucket, and a small net's in general, does one all-reduce an iteration.
const (
	firstBucketBytes = 1 << 20
	bucketBytes      = 25 << 20
)

// alignBytes is where each gradient starts in the flat buffer: the
// alignment cuBLAS and cuDNN want of their outputs.
const alignBytes = 256

// GradientBuckets averages a GPU rank's gradients over the ranks while the
// backward pass is still running: NVCaffe's reduce buckets, PyTorch DDP's
// gradient buckets. The learnable parameters' diffs are laid out in one
// device allocation in the order the backward pass completes them; the
// allocation is cut into buckets, and each bucket is all-reduced (NCCL's
// mean) on a stream of its own as soon as the backward passes of the
// layers that add to it are done, the compute stream going on with the
// layers below. Finish makes the compute stream wait for every bucket,
// before the update reads the diffs.
//
// Everything is queued on streams and ordered with events, with no host
// synchronisation, so that a CUDA graph can record it: a whole iteration,
// all-reduces included, replays with one launch.
//
// The job's agreement on requests (stop, snapshot; see Agree) rides in the
// last bucket: SetRequest before the passes, Agreed after them. A
// GradientBuckets is for one goroutine at a time.
type GradientBuckets[T blob.Float] struct {
	comm    *ncclComm
	dev     *cuda.Device
	compute *cuda.Stream
	side    *cuda.Stream // where the all-reduces run
	flat    cuda.DevicePtr
	elems   int
	buckets []bucket
	ready   []*cuda.Event // per bucket: recorded on the compute stream when it is complete
	joined  *cuda.Event   // recorded on the side stream after the last bucket
	forked  *cuda.Event   // recorded on the compute stream where a pass begins
	copied  *cuda.Event   // recorded on the side stream after the agreed bits' copy
	next    int           // the next bucket to launch in this pass
	pending bool          // Finish queued side work that Join has not joined yet

	// The request bits: this rank's as elements of T in pinned host
	// memory, copied into the flat buffer's tail by Begin; their mean over
	// the ranks copied back by Finish.
	reqOff  int
	bits    int
	reqHost []byte
	agreed  []byte

	timeline *timeline // EnableTimeline; nil: none
}

// bucket is a range of the flat buffer, all-reduced at once.
type bucket struct {
	off, n int // elements
	after  int // the layer after whose backward pass the range is complete
	params int
}

// NewGradientBuckets lays the diffs of params, a GPU rank's learnable
// parameters, out in one device allocation and cuts it into buckets.
// doneAfter[i] is the layer after whose backward pass params[i]'s
// gradient is complete (net.Net.LearnableParamsDoneAfter); requestBits is
// the number of request bits the job agrees on; a bucket closes past
// capBytes, or for capBytes 0 past 1 MiB for the first and 25 MiB for the
// others (PyTorch DDP's bucket_cap_mb). The diffs' device memory
// becomes the allocation's, zeroed: call it before training. It returns
// nil and no error when comm is not a GPU communicator of this kind (host
// ranks: use Gradients).
func NewGradientBuckets[T blob.Float](comm Comm, params []*blob.Blob[T], doneAfter []int, requestBits, capBytes int) (*GradientBuckets[T], error) {
	c, ok := comm.(*ncclComm)
	if !ok {
		return nil, nil
	}
	if len(doneAfter) != len(params) {
		return nil, fmt.Errorf("parallel: %d layers given for %d parameters", len(doneAfter), len(params))
	}
	g := &GradientBuckets[T]{comm: c, dev: c.ctx.Device(), compute: c.ctx.Stream(), bits: requestBits}
	order := make([]int, len(params))
	for i := range order {
		order[i] = i
	}
	// The last layers' gradients are complete first.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(doneAfter[b], doneAfter[a]) })
	offs := g.layout(params, doneAfter, order, capBytes)
	if err := g.allocate(params, order, offs); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

// elemBytes is the size of one element.
func elemBytes[T blob.Float]() int { return int(unsafe.Sizeof(T(0))) }

// layout places the parameters in order and cuts the buckets; it returns
// each parameter's offset in elements, by its index in params.
func (g *GradientBuckets[T]) layout(params []*blob.Blob[T], doneAfter, order []int, capBytes int) []int {
	size := elemBytes[T]()
	align := alignBytes / size
	offs := make([]int, len(params))
	first, rest := firstBucketBytes, bucketBytes
	if capBytes > 0 {
		first, rest = capBytes, capBytes
	}
	limit := first
	// The lowest layer's gradients are complete when the backward pass
	// ends: their all-reduce is the one nothing hides, so they make a
	// bucket of their own, and the others' all-reduce runs beside that
	// layer's backward pass (2-GPU LeNet 0.84 -> 0.89 of one GPU's rate,
	// CIFAR-10 quick 0.89 -> 0.98, on H100s).
	lowest := math.MaxInt
	for _, i := range order {
		lowest = min(lowest, doneAfter[i])
	}
	cur := bucket{after: math.MaxInt}
	off := 0
	for _, i := range order {
		if cur.params > 0 && (cur.n*size >= limit || doneAfter[i] == lowest && cur.after > lowest) {
			g.buckets = append(g.buckets, cur)
			cur, limit = bucket{off: off, after: math.MaxInt}, rest
		}
		offs[i] = off
		n := (params[i].Count() + align - 1) / align * align
		off += n
		cur.n += n
		cur.params++
		cur.after = min(cur.after, doneAfter[i])
	}
	// The request bits close the last bucket: the job learns of them with
	// the gradients.
	g.reqOff = off
	cur.n += g.bits
	if cur.after == math.MaxInt {
		cur.after = -1 // no parameters: at Finish
	}
	g.buckets = append(g.buckets, cur)
	g.elems = off + g.bits
	return offs
}

// allocate makes the flat buffer, the events, the side stream and the
// pinned request memory, and points the diffs at the buffer.
func (g *GradientBuckets[T]) allocate(params []*blob.Blob[T], order, offs []int) error {
	size := elemBytes[T]()
	var err error
	if g.flat, err = g.dev.Alloc(g.elems * size); err != nil {
		return fmt.Errorf("parallel: the gradients' buffer (%d bytes): %w", g.elems*size, err)
	}
	if err := g.dev.Memset(g.flat, 0, g.elems*size); err != nil {
		return err
	}
	for _, i := range order {
		p := params[i]
		at := g.flat + cuda.DevicePtr(offs[i]*size)
		if err := p.Diff().SetSharedGPUData(at, p.Count()*size); err != nil {
			return err
		}
	}
	if g.side, err = g.dev.NewStream(); err != nil {
		return err
	}
	for range g.buckets {
		e, err := g.dev.NewSyncEvent()
		if err != nil {
			return err
		}
		g.ready = append(g.ready, e)
	}
	for _, e := range []**cuda.Event{&g.joined, &g.forked, &g.copied} {
		if *e, err = g.dev.NewSyncEvent(); err != nil {
			return err
		}
	}
	if g.bits > 0 {
		if g.reqHost, err = g.dev.HostAlloc(g.bits * size); err != nil {
			return err
		}
		if g.agreed, err = g.dev.HostAlloc(g.bits * size); err != nil {
			return err
		}
	}
	return nil
}

// Buckets returns the number of buckets, the all-reduces of an iteration.
func (g *GradientBuckets[T]) Buckets() int { return len(g.buckets) }

// String describes the buckets, e.g. "2 buckets: 1.6 MB (3 gradients,
// after layer 9), 0.1 MB (5 gradients, after layer 2)".
func (g *GradientBuckets[T]) String() string {
	parts := make([]string, len(g.buckets))
	for i, b := range g.buckets {
		parts[i] = fmt.Sprintf("%.1f MB (%d gradients, after layer %d)", float64(b.n*elemBytes[T]())/1e6, b.params, b.after)
	}
	noun := "buckets"
	if len(g.buckets) == 1 {
		noun = "bucket"
	}
	return fmt.Sprintf("%d %s: %s", len(g.buckets), noun, strings.Join(parts, ", "))
}

// SetRequest sets this rank's request bits for the next pass's
// agreement. The pass of the previous call must have finished (the
// solver has read its loss).
func (g *GradientBuckets[T]) SetRequest(bits uint) {
	req := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(g.reqHost))), g.bits)
	for i := range req {
		req[i] = T(bits >> i & 1)
	}
}

// Agreed returns the union of the ranks' request bits of the last
// finished pass. The work Finish queued must have completed.
func (g *GradientBuckets[T]) Agreed() uint {
	agreed := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(g.agreed))), g.bits)
	var out uint
	for i, v := range agreed {
		if v > 0 {
			out |= 1 << i
		}
	}
	return out
}

// Check returns why the job's communicator failed (a rank that died, an
// abort, an error a queued all-reduce met), nil if it did not. A replayed
// CUDA graph runs the all-reduces without a call into the communicator:
// check after each iteration, before trusting Agreed.
func (g *GradientBuckets[T]) Check() error {
	if err := g.comm.check(); err != nil {
		return fmt.Errorf("%v: %w", g.comm, err)
	}
	return nil
}

// Begin starts a pass whose backward pass reduces the gradients: the
// request bits go to the device on the side stream, while the forward
// pass runs, and LayerDone launches the buckets from the first on.
func (g *GradientBuckets[T]) Begin() error {
	g.next = 0
	if g.timeline != nil {
		if err := g.timeline.start.Record(g.compute); err != nil {
			return err
		}
	}
	if g.bits == 0 {
		return nil
	}
	// After the work queued so far (the gradients zeroed), which may
	// cover the buffer's tail.
	if err := g.forked.Record(g.compute); err != nil {
		return err
	}
	if err := g.side.WaitEvent(g.forked); err != nil {
		return err
	}
	at := g.flat + cuda.DevicePtr(g.reqOff*elemBytes[T]())
	return g.dev.CopyHtoDAsync(at, g.reqHost, g.side)
}

// LayerDone launches the all-reduce of every bucket that is complete now
// that the backward pass of layer i is done (net.Net.SetAfterBackward).
func (g *GradientBuckets[T]) LayerDone(i int) error {
	for g.next < len(g.buckets) && g.buckets[g.next].after >= i {
		if err := g.launch(g.next); err != nil {
			return err
		}
		g.next++
	}
	return nil
}

// launch queues bucket k's all-reduce on the side stream, after the work
// queued on the compute stream so far.
func (g *GradientBuckets[T]) launch(k int) error {
	if err := g.ready[k].Record(g.compute); err != nil {
		return err
	}
	if err := g.side.WaitEvent(g.ready[k]); err != nil {
		return err
	}
	b := g.buckets[k]
	if g.timeline != nil {
		if err := g.timeline.begin[k].Record(g.side); err != nil {
			return err
		}
	}
	_, double := any(T(0)).(float64)
	at := g.flat + cuda.DevicePtr(b.off*elemBytes[T]())
	if err := g.comm.allReduceMeanOn(at, b.n, double, g.side); err != nil {
		return fmt.Errorf("%v: all-reduce of gradient bucket %d: %w", g.comm, k, err)
	}
	if g.timeline != nil {
		return g.timeline.end[k].Record(g.side)
	}
	return nil
}

// Finish launches the buckets not launched yet and makes the compute
// stream wait for all of them, before the update reads the diffs. The
// agreed request bits are copied back to the host on the side stream,
// alongside the update; Join joins that copy.
func (g *GradientBuckets[T]) Finish() error {
	if g.timeline != nil {
		if err := g.timeline.backward.Record(g.compute); err != nil {
			return err
		}
	}
	for g.next < len(g.buckets) {
		if err := g.launch(g.next); err != nil {
			return err
		}
		g.next++
	}
	if err := g.joined.Record(g.side); err != nil {
		return err
	}
	if err := g.compute.WaitEvent(g.joined); err != nil {
		return err
	}
	if g.bits == 0 {
		return nil
	}
	at := g.flat + cuda.DevicePtr(g.reqOff*elemBytes[T]())
	if err := g.dev.CopyDtoHAsync(g.agreed, at, g.side); err != nil {
		return err
	}
	g.pending = true
	return g.copied.Record(g.side)
}

// Join makes the compute stream wait for the copy of the agreed request
// bits that Finish queued: call it after the update is queued, before the
// host reads Agreed (after the compute stream has caught up), and before
// a CUDA graph capturing the pass ends, which must join every stream it
// forked. It does nothing when nothing is pending.
func (g *GradientBuckets[T]) Join() error {
	if !g.pending {
		return nil
	}
	g.pending = false
	return g.compute.WaitEvent(g.copied)
}

// ReduceAll reduces every bucket now, after the backward passes: for an
// iteration of several iter_size passes, whose gradients are complete
// only after the last. Join as after Finish.
func (g *GradientBuckets[T]) ReduceAll() error {
	if err := g.Begin(); err != nil {
		return err
	}
	return g.Finish()
}

// Close frees the buffer (the diffs then have no device memory: close the
// net first), the events, the stream and the pinned memory.
func (g *GradientBuckets[T]) Close() error {
	var errs []error
	if g.side != nil {
		errs = append(errs, g.side.Synchronize(), g.side.Close())
		g.side = nil
	}
	for _, e := range g.ready {
		errs = append(errs, e.Close())
	}
	g.ready = nil
	for _, e := range []**cuda.Event{&g.joined, &g.forked, &g.copied} {
		if *e != nil {
			errs = append(errs, (*e).Close())
			*e = nil
		}
	}
	if g.flat != 0 {
		errs = append(errs, g.dev.Free(g.flat))
		g.flat = 0
	}
	for _, b := range [][]byte{g.reqHost, g.agreed} {
		if b != nil {
			errs = append(errs, g.dev.HostFree(b))
		}
	}
	g.reqHost, g.agreed = nil, nil
	errs = append(errs, g.timeline.close())
	g.timeline = nil
	return errors.Join(errs...)
}
