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
// last bucket: SetRequest before the passes; after them, either
// QueueAgreed and Agreed once the compute stream has passed that copy, or
// AgreedCopyTo's device copy beside the update, which a solver reads back
// with its loss (AgreedIn). The copies between host and device are queued
// outside the passes, through two host slots used in turn, so that a
// solver may prepare the next iteration while a replayed pass still runs:
// the host is then at most one pass ahead. A GradientBuckets is for one
// goroutine at a time.
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
	copied  *cuda.Event   // recorded on the side stream after the agreed bits' device copy
	next    int           // the next bucket to launch in this pass
	pending bool          // Finish queued side work that Join has not joined yet

	// The request bits, as elements of T: this rank's, written by
	// SetRequest into a pinned slot and copied to reqDev on the compute
	// stream, from where Begin copies them into the flat buffer's tail
	// (a recorded pass reads device memory only); their mean over the
	// ranks, copied back into a pinned slot by QueueAgreed. Each side
	// has two slots, used in turn: a slot is written again only after
	// the pass that read it has been waited for.
	reqOff  int
	bits    int
	reqDev  cuda.DevicePtr
	reqHost [2][]byte
	agreed  [2][]byte
	reqNext int            // the request slot SetRequest writes next
	reqSent uint           // the bits in reqDev
	agrNext int            // the agreed slot QueueAgreed fills next
	agrDev  cuda.DevicePtr // where Finish copies the agreed bits on the device; 0: nowhere

	ofParam []int                                // each parameter's bucket, by its index in NewGradientBuckets' params
	after   func(k int, side *cuda.Stream) error // AfterReduce's; nil: none

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
	g.ofParam = make([]int, len(params))
	for i, off := range offs {
		for k, b := range g.buckets {
			if off >= b.off && off < b.off+b.n {
				g.ofParam[i] = k
			}
		}
	}
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
	if g.bits == 0 {
		return nil
	}
	if g.reqDev, err = g.dev.Alloc(g.bits * size); err != nil {
		return err
	}
	if err := g.dev.Memset(g.reqDev, 0, g.bits*size); err != nil {
		return err
	}
	for i := range 2 {
		if g.reqHost[i], err = g.dev.HostAlloc(g.bits * size); err != nil {
			return err
		}
		if g.agreed[i], err = g.dev.HostAlloc(g.bits * size); err != nil {
			return err
		}
	}
	return nil
}

// Buckets returns the number of buckets, the all-reduces of an iteration.
func (g *GradientBuckets[T]) Buckets() int { return len(g.buckets) }

// BucketOf returns the bucket of parameter i (its index in the params
// given to NewGradientBuckets).
func (g *GradientBuckets[T]) BucketOf(i int) int { return g.ofParam[i] }

// AfterReduce makes each bucket's launch queue f(k, side) on the side
// stream right after bucket k's all-reduce: work on the bucket's averaged
// gradients (a fused update of its parameters) that then runs beside the
// rest of the backward pass; Finish's join waits for it. f nil: nothing.
func (g *GradientBuckets[T]) AfterReduce(f func(k int, side *cuda.Stream) error) { g.after = f }

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

// RequestBits returns the number of request bits the job agrees on.
func (g *GradientBuckets[T]) RequestBits() int { return g.bits }

// SetRequest sets this rank's request bits for the next pass's
// agreement. Bits unchanged since the last call stay on the device; new
// ones are written into the next pinned slot and their copy to the device
// queued on the compute stream, before the pass. The pass that read that
// slot last (two copies before) must have been waited for; the one of the
// copy before may still run.
func (g *GradientBuckets[T]) SetRequest(bits uint) error {
	if g.bits == 0 || bits == g.reqSent {
		return nil
	}
	g.reqSent = bits
	slot := g.reqHost[g.reqNext]
	g.reqNext ^= 1
	req := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(slot))), g.bits)
	for i := range req {
		req[i] = T(bits >> i & 1)
	}
	return g.dev.CopyHtoDAsync(g.reqDev, slot, g.compute)
}

// QueueAgreed queues the copy of the last pass's agreed request bits (the
// mean over the ranks, in the flat buffer's tail until the next pass's
// Begin) into the next pinned slot, on the compute stream after the pass,
// and returns the slot for Agreed. Call it outside a recording, once per
// pass that ran Finish, before the next pass is queued.
func (g *GradientBuckets[T]) QueueAgreed() (int, error) {
	slot := g.agrNext
	g.agrNext ^= 1
	if g.bits == 0 {
		return slot, nil
	}
	at := g.flat + cuda.DevicePtr(g.reqOff*elemBytes[T]())
	return slot, g.dev.CopyDtoHAsync(g.agreed[slot], at, g.compute)
}

// Agreed returns the union of the ranks' request bits that QueueAgreed
// copied into slot. The compute stream must have passed that copy.
func (g *GradientBuckets[T]) Agreed(slot int) uint {
	if g.bits == 0 {
		return 0
	}
	return g.AgreedIn(g.agreed[slot])
}

// AgreedCopyTo makes each pass's Finish copy the agreed request bits,
// RequestBits elements of T, to dst on the device, beside the update
// (Join joins the copy): for a solver that reads them back with its loss
// in one copy. dst 0 turns the copy off.
func (g *GradientBuckets[T]) AgreedCopyTo(dst cuda.DevicePtr) { g.agrDev = dst }

// AgreedIn returns the union of the ranks' request bits from b, which
// holds the RequestBits elements of T that AgreedCopyTo's copy wrote.
func (g *GradientBuckets[T]) AgreedIn(b []byte) uint {
	agreed := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), g.bits)
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
// request bits go into the flat buffer's tail on the side stream, while
// the forward pass runs, and LayerDone launches the buckets from the
// first on.
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
	return g.dev.CopyDtoDAsync(at, g.reqDev, g.bits*elemBytes[T](), g.side)
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
		if err := g.timeline.end[k].Record(g.side); err != nil {
			return err
		}
	}
	if g.after != nil {
		return g.after(k, g.side)
	}
	return nil
}

// Finish launches the buckets not launched yet and makes the compute
// stream wait for all of them, before the update reads the diffs. The
// agreed request bits are copied to AgreedCopyTo's address on the side
// stream, beside the update; Join joins that copy.
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
	if g.bits == 0 || g.agrDev == 0 {
		return nil
	}
	at := g.flat + cuda.DevicePtr(g.reqOff*elemBytes[T]())
	if err := g.dev.CopyDtoDAsync(g.agrDev, at, g.bits*elemBytes[T](), g.side); err != nil {
		return err
	}
	g.pending = true
	return g.copied.Record(g.side)
}

// Join makes the compute stream wait for the agreed bits' device copy
// that Finish queued: call it after the update is queued, before the
// copy's destination is read, and before a CUDA graph capturing the pass
// ends, which must join every stream it forked. It does nothing when
// nothing is pending.
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
	for _, p := range []*cuda.DevicePtr{&g.flat, &g.reqDev} {
		if *p != 0 {
			errs = append(errs, g.dev.Free(*p))
			*p = 0
		}
	}
	for _, b := range [][]byte{g.reqHost[0], g.reqHost[1], g.agreed[0], g.agreed[1]} {
		if b != nil {
			errs = append(errs, g.dev.HostFree(b))
		}
	}
	g.reqHost, g.agreed = [2][]byte{}, [2][]byte{}
	errs = append(errs, g.timeline.close())
	g.timeline = nil
	return errors.Join(errs...)
}
