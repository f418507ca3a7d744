package solver

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// graphWarmup is the number of iterations run as written before one is
// recorded: the first passes choose cuDNN's algorithms, compile kernels,
// size the workspace and allocate every blob, none of which a recording
// may do.
const graphWarmup = 2

// iterationGraph records one training iteration on the GPU as a CUDA graph
// and replays it, one launch an iteration instead of hundreds. What it
// records: the forward and backward passes of every layer after the data
// layers, with the loss summed on the device; and, where the update is
// SGD's fused one and nothing runs between backward and update, the whole
// iteration: zeroing the gradients, the passes and the update, with the
// learning rate read from device memory. Otherwise (another solver type,
// OnGradientsReady hooks, clip_gradients, iter_size above 1) the graph
// holds the passes, replayed once per pass, and the solver zeroes the
// gradients and updates as written. What stays on the host each pass: the
// data layers (their batches come from the host), writing the learning
// rate and the RNG salt, and reading the loss back after the replay (for
// the NaN check and the display).
//
// The host runs one replay ahead where nothing reads the iteration's
// results before the next is queued (Solver.mayRunAhead): the replay's
// loss (and a job's agreed requests) are copied into pinned host slots,
// used in turn, and read after the next iteration's data layers have run
// and its replay is queued. The device then goes from one replay to the
// next without waiting for the host, which matters most where an
// iteration is short: LeNet's takes about 0.28 ms on an H100, of which
// the host's read of the loss and preparation of the next iteration took
// tens of microseconds, and two GPUs added that of the slower host to
// every iteration.
//
// A replay repeats the recorded launches with the recorded addresses and
// arguments, so the graph is dropped, and recorded again after warming up,
// when any blob's shape or device address changes or the cuDNN workspace
// moves. Nets whose passes need the host in the middle (a layer computing
// on the host or not known to replay faithfully, debug_info) and
// data-parallel jobs of host ranks train without a graph, which the log
// says once. A GPU rank of a data-parallel job records its gradient
// buckets' all-reduces with the passes (parallel.GradientBuckets):
// replaying or running as written, every rank queues the same collectives
// in the same order, as NCCL needs.
type iterationGraph[T blob.Float] struct {
	off   string // why this run trains without graphs; "" while they may be used
	ready bool   // the checks that hold for the whole run were made

	whole      bool               // the graph holds the whole iteration, update included
	start      int                // the first recorded layer
	last       int                // the net's last layer
	v          *device.GPUView[T] // StoreWords, Set
	acc        *blob.Blob[T]      // the loss, summed on the device
	scalars    cuda.DevicePtr     // the float64 learning rate the recorded update reads
	rateBits   uint64             // the rate's bits stored there
	rateStored bool               // rateBits is in scalars
	salt       cuda.DevicePtr     // the context's RNG salt (device.Context.RNGSalt)
	graph      *cuda.Graph
	eager      int // iterations run as written since the graph was (re)started
	replays    int // replays of the current graph
	brief      int // graphs dropped after fewer than graphMinReplays replays
	sources    []sourceTop[T]
	// bucketPlans update each gradient bucket's parameters after its
	// all-reduce (planBuckets); empty: one update after the passes.
	bucketPlans []*mathfn.SGDPlan
	results     [2]replaySlot // where each replay's results go, in turn
	next        int           // the slot of the next replay
	open        openReplay    // the replay the host ran ahead of, if any
	sleep       bool          // wait for replays asleep: the last one was long

	// What the recording assumed, checked before each replay.
	blobs   []*blob.Blob[T]
	shapes  [][]int
	mems    []*syncedmem.SyncedMemory
	ptrs    []cuda.DevicePtr
	wsMoves int
}

// graphMinReplays and graphMaxBrief give up on graphs for a net whose
// shapes or addresses keep changing (an AnnotatedData layer's labels, one
// row per box): after graphMaxBrief graphs dropped before graphMinReplays
// replays each, the run goes on without.
const (
	graphMinReplays = 8
	graphMaxBrief   = 3
)

// replaySlot receives one replay's results: the loss (and a job's agreed
// requests) copied into pinned host memory, and two events recorded after
// the copy, one waited for spinning and one asleep.
type replaySlot struct {
	loss         []byte
	spin, asleep *cuda.Event
}

// openReplay is a replay whose results the host has not read yet.
type openReplay struct {
	ok   bool // there is one
	iter int  // the iteration
	slot int  // its replaySlot
}

// sourceTop is a data layer's top and the device buffer of the graph's
// own from which the recorded layers read it. A GPU Data layer's top reads
// each prefetched batch where it lies, at an address that changes from
// batch to batch; before each replay the batch is copied to the one
// address the graph was recorded with (pinSources).
type sourceTop[T blob.Float] struct {
	b     *blob.Blob[T]
	buf   cuda.DevicePtr
	bytes int
}

// errRecording wraps a failed recording: the iteration then runs as
// written, and the run trains on without graphs.
type errRecording struct{ err error }

func (e errRecording) Error() string { return "recording a CUDA graph: " + e.err.Error() }

// prepare makes the checks that hold for the whole run, once, and on the
// GPU sets up the device scalars and turns on the RNG salt, whether or not
// graphs are used, so that a run draws the same numbers with and without
// them. It returns whether graphs may be used.
func (g *iterationGraph[T]) prepare(s *Solver[T], disabled bool) bool {
	if g.ready {
		return g.off == ""
	}
	g.ready = true
	if s.ctx.OnGPU() {
		if err := g.setUp(s); err != nil {
			g.off = err.Error()
		}
	}
	if g.off == "" {
		g.off = s.graphObstacle(disabled)
	}
	if g.off != "" {
		if s.ctx.OnGPU() {
			logf.Infof(s.log, "Training without CUDA graphs: %s", g.off)
		}
		return false
	}
	return true
}

// storeScalars writes the learning rate and the RNG salt to the device,
// where the recorded update and the random number kernels read them.
func (g *iterationGraph[T]) storeScalars(rate float64, salt uint64) error {
	g.v.ResetErr()
	if bits := math.Float64bits(rate); !g.rateStored || bits != g.rateBits {
		// Most policies keep the rate for many iterations: one launch
		// less on the way from one replay to the next.
		g.v.StoreWords(g.scalars, bits)
		g.rateBits, g.rateStored = bits, true
	}
	g.v.StoreWords(g.salt, salt)
	return g.v.Err()
}

// graphObstacle says why the solver's passes cannot be recorded, "" when
// they can.
func (s *Solver[T]) graphObstacle(disabled bool) string {
	switch {
	case !s.ctx.OnGPU():
		return "on the CPU"
	case disabled:
		return "turned off (Options.NoCUDAGraphs, -cuda_graphs=false)"
	case s.comm != nil && s.buckets == nil:
		return "a data-parallel job over host memory"
	case len(s.starts) > 0:
		return "on_start hooks (OnStart), which may write blobs a replay would read stale"
	case s.lossScale.cfg.Mode == LossScaleDynamic || s.lossScale.cfg.Mode == LossScaleAdaptive:
		// The scale is written into the loss tops' diffs by the
		// recorded backward pass, as it was when recorded.
		return fmt.Sprintf("%v loss scaling, whose scale changes between iterations while a replay repeats the recorded one", s.lossScale.cfg.Mode)
	}
	if _, err := s.net.RecordableFrom(); err != nil {
		return err.Error()
	}
	return ""
}

// wholeIteration says whether the graph can hold the whole iteration: the
// update is SGD's fused one, and nothing runs between the passes and it
// (loss scaling divides the gradients by the scale there).
func (s *Solver[T]) wholeIteration() bool {
	_, fused := s.updater.(*fusedSGD[T])
	return fused && len(s.hooks) == 0 && s.param.GetClipGradients() < 0 && s.param.GetIterSize() == 1 &&
		s.lossScale.cfg.Mode == LossScaleOff
}

// setUp allocates the loss accumulator and the device scalars and turns on
// the RNG salt.
func (g *iterationGraph[T]) setUp(s *Solver[T]) error {
	g.start = s.net.SourceLayers()
	g.whole = s.wholeIteration()
	seen := map[*blob.Blob[T]]bool{}
	for i := range g.start {
		for _, b := range s.net.Tops(i) {
			if !seen[b] {
				seen[b] = true
				g.sources = append(g.sources, sourceTop[T]{b: b})
			}
		}
	}
	v, err := device.NewGPUView[T](s.ctx)
	if err != nil {
		return err
	}
	g.v = v
	// The loss, then a job's agreed requests (copied there beside the
	// update), read back in one copy.
	requests := 0
	if s.overlapped() {
		requests = s.buckets.RequestBits()
	}
	acc, err := blob.New[T](1 + requests)
	if err != nil {
		return err
	}
	acc.SetDevice(s.ctx.Device())
	g.acc = acc
	// Allocated (and zeroed) now: a recording cannot allocate.
	p, err := acc.MutableGPUData()
	if err != nil {
		return err
	}
	if requests > 0 {
		s.buckets.AgreedCopyTo(p + cuda.DevicePtr(unsafe.Sizeof(T(0))))
	}
	g.last = len(s.net.Layers()) - 1
	d := s.ctx.Device()
	for i := range g.results {
		r := &g.results[i]
		if r.loss, err = d.HostAlloc(acc.Count() * int(unsafe.Sizeof(T(0)))); err != nil {
			return err
		}
		if r.spin, err = d.NewSpinEvent(); err != nil {
			return err
		}
		if r.asleep, err = d.NewSyncEvent(); err != nil {
			return err
		}
	}
	if g.salt, err = s.ctx.RNGSalt(); err != nil {
		return err
	}
	g.scalars, err = s.ctx.Device().Alloc(8)
	return err
}

// begin runs at the start of an iteration that may use the graph and
// reports whether the iteration goes through the graph (replaying it, or
// recording it first). A graph of the whole iteration is dropped once
// hooks have been added since it was recorded.
func (g *iterationGraph[T]) begin(s *Solver[T]) (bool, error) {
	if whole := s.wholeIteration(); whole != g.whole {
		g.whole = whole
		if err := g.drop(); err != nil {
			return false, err
		}
	}
	return g.graph != nil || g.eager >= graphWarmup, nil
}

// errStale says that the data layers, which have just run, changed a
// blob's shape or address, or the workspace moved: the graph cannot be
// replayed and was dropped.
var errStale = errors.New("the CUDA graph is stale")

// dropStale drops a graph that no longer matches the net, and gives up on
// graphs for the run when they keep going stale.
func (g *iterationGraph[T]) dropStale(s *Solver[T]) error {
	if g.replays < graphMinReplays {
		g.brief++
	}
	if g.brief >= graphMaxBrief {
		why := fmt.Sprintf("the net's shapes or device memory changed after fewer than %d replays, %d times", graphMinReplays, g.brief)
		logf.Infof(s.log, "Iteration %d: training on without CUDA graphs: %s", s.iter, why)
		return g.stop(why)
	}
	logf.Infof(s.log, "Iteration %d: the net's shapes or device memory changed; recording its CUDA graph again after %d iterations", s.iter, graphWarmup)
	return g.drop()
}

// iterate runs the iteration through the graph, recording it first when
// there is none. With ahead, a replay of the whole iteration is left
// running with its results unread (Solver.collectReplay reads them). When
// the recording fails (the run then goes on without graphs) or the data
// layers made the graph stale, the rest of the iteration runs as
// written.
func (g *iterationGraph[T]) iterate(s *Solver[T], rate float64, ahead bool) (iteration[T], error) {
	size := int(s.param.GetIterSize())
	if !g.whole {
		if err := s.clearParamDiffs(); err != nil {
			return iteration[T]{}, err
		}
	}
	ahead = ahead && g.whole && size == 1
	var loss T
	for pass := range size {
		if pass > 0 {
			if err := s.checkBetweenPasses(); err != nil {
				return iteration[T]{}, err
			}
		}
		l, left, err := g.pass(s, rate, pass, ahead)
		var rec errRecording
		switch {
		case errors.As(err, &rec):
			logf.Warnf(s.log, "Iteration %d: %v; training on without CUDA graphs", s.iter, err)
			if err := g.stop(rec.Error()); err != nil {
				return iteration[T]{}, err
			}
			fallthrough
		case errors.Is(err, errStale):
			rest, err := g.finish(s, rate, pass)
			return iteration[T]{loss: (loss + rest) / T(size)}, err
		case err != nil:
			return iteration[T]{}, err
		}
		if left {
			return iteration[T]{updated: true, ahead: true, agreed: s.overlapped()}, nil
		}
		loss += l
	}
	return iteration[T]{loss: loss / T(size), updated: g.whole, agreed: s.overlapped()}, nil
}

// finish runs the passes from pass on as written, the first after its
// data layers (which have run), and returns the sum of their losses; a
// graph of the whole iteration would have zeroed the gradients first.
func (g *iterationGraph[T]) finish(s *Solver[T], rate float64, pass int) (T, error) {
	if g.whole {
		if err := s.clearParamDiffs(); err != nil {
			return 0, err
		}
	}
	return s.runPasses(rate, pass, g.start)
}

// pass runs the data layers and one replay, recording the graph first
// when there is none, and returns the pass's loss, read back; with ahead
// it leaves the replay running, its results unread (g.open), and returns
// true.
func (g *iterationGraph[T]) pass(s *Solver[T], rate float64, pass int, ahead bool) (T, bool, error) {
	if err := s.beginPass(rate, pass); err != nil {
		return 0, false, err
	}
	if g.start > 0 {
		if _, err := s.net.ForwardFromTo(0, g.start-1); err != nil {
			return 0, false, err
		}
	}
	if err := g.pinSources(s); err != nil {
		return 0, false, err
	}
	if g.graph != nil && !g.matches(s) {
		if err := g.dropStale(s); err != nil {
			return 0, false, err
		}
		return 0, false, errStale
	}
	if g.graph == nil {
		if err := g.record(s); err != nil {
			return 0, false, errRecording{err}
		}
		what, ahead := "the passes", ""
		if g.whole {
			what = "the whole iteration with the update"
			if !s.noAhead {
				ahead = ", the host one replay ahead between displays, tests and snapshots"
			}
		}
		logf.Infof(s.log, "Iteration %d: recorded as a CUDA graph of %d operations (layers %d to %d, %s); replaying it from now on%s", s.iter, g.graph.Nodes(), g.start, g.last, what, ahead)
	} else if err := g.pushHostHeads(); err != nil {
		return 0, false, err
	}
	if err := g.graph.Launch(s.ctx.Stream()); err != nil {
		return 0, false, err
	}
	g.replays++
	if err := g.markWritten(); err != nil {
		return 0, false, err
	}
	r, err := g.queueResults(s)
	if err != nil {
		return 0, false, err
	}
	if ahead {
		g.open = r
		return 0, true, nil
	}
	loss, err := g.collect(s, r)
	return loss, false, err
}

// queueResults queues the copy of the replay's results into the next
// slot, after the replay on the compute stream, and the slot's events.
func (g *iterationGraph[T]) queueResults(s *Solver[T]) (openReplay, error) {
	r := openReplay{ok: true, iter: s.iter, slot: g.next}
	g.next ^= 1
	slot := &g.results[r.slot]
	stream := s.ctx.Stream()
	p, err := g.acc.GPUData()
	if err != nil {
		return r, err
	}
	if err := s.ctx.Device().CopyDtoHAsync(slot.loss, p, stream); err != nil {
		return r, err
	}
	if err := slot.spin.Record(stream); err != nil {
		return r, err
	}
	return r, slot.asleep.Record(stream)
}

// collect waits for a replay's results and returns its loss; a GPU rank
// of a job keeps its agreed requests for agreeOn, after checking its
// communicator. A NaN loss is explained by the net's layers where they
// can (from the blobs of the last pass queued).
func (g *iterationGraph[T]) collect(s *Solver[T], r openReplay) (T, error) {
	slot := &g.results[r.slot]
	if err := g.wait(slot); err != nil {
		return 0, err
	}
	size := int(unsafe.Sizeof(T(0)))
	if s.overlapped() {
		if err := s.buckets.Check(); err != nil {
			// An aborted all-reduce leaves the requests undefined.
			return 0, err
		}
		s.agreed |= s.buckets.AgreedIn(slot.loss[size:])
	}
	loss := *(*T)(unsafe.Pointer(unsafe.SliceData(slot.loss)))
	if loss != loss {
		if err := s.net.ExplainNaN(); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// takeOpen returns the replay the host ran ahead of (ok false: none) and
// forgets it.
func (g *iterationGraph[T]) takeOpen() openReplay {
	r := g.open
	g.open = openReplay{}
	return r
}

// sleepAbove and spinBelow bound the replays waited for asleep: a wait
// for the device spins a core (the driver's default with a core per
// context), which the data layers' decoders can use while a long replay
// runs; a short one is waited for spinning, as waking up costs tens of
// microseconds.
const (
	sleepAbove = 2 * time.Millisecond
	spinBelow  = time.Millisecond
)

// wait waits for the slot's replay to finish, asleep after a long one.
func (g *iterationGraph[T]) wait(slot *replaySlot) error {
	start := time.Now()
	var err error
	if g.sleep {
		err = slot.asleep.Synchronize()
	} else {
		err = slot.spin.Synchronize()
	}
	switch took := time.Since(start); {
	case took > sleepAbove:
		g.sleep = true
	case took < spinBelow:
		g.sleep = false
	}
	return err
}

// record captures the recorded part on the compute stream and keeps what
// the recording assumed. Nothing recorded has run when it returns.
func (g *iterationGraph[T]) record(s *Solver[T]) error {
	var f *fusedSGD[T]
	if g.whole {
		f = s.updater.(*fusedSGD[T])
		if err := f.collect(s); err != nil {
			return err
		}
		if f.plan == nil || !f.plan.Matches(f.params) {
			return errors.New("the fused update has no plan for the parameters")
		}
		if err := g.planBuckets(s, f); err != nil {
			return err
		}
	}
	if err := g.snapshotState(s); err != nil {
		return err
	}
	stream := s.ctx.Stream()
	if err := stream.BeginCapture(); err != nil {
		return err
	}
	bodyErr := g.body(s, f)
	graph, err := stream.EndCapture()
	if bodyErr != nil || err != nil {
		if graph != nil {
			err = errors.Join(err, graph.Close())
		}
		return errors.Join(bodyErr, err)
	}
	g.graph = graph
	return nil
}

// body queues the recorded part: with f (the whole iteration) the
// gradients zeroed first and the update last.
func (g *iterationGraph[T]) body(s *Solver[T], f *fusedSGD[T]) (err error) {
	defer device.Recover(&err)
	v := g.v
	v.ResetErr()
	if f != nil {
		v.ZeroDiffs(f.plan)
	}
	v.Set(1, 0, v.MutableData(g.acc))
	if err := v.Err(); err != nil {
		return err
	}
	momentum, l1 := T(s.param.GetMomentum()), s.param.GetRegularizationType() == "L1"
	byBucket := f != nil && len(g.bucketPlans) > 0
	if byBucket {
		s.buckets.AfterReduce(func(k int, side *cuda.Stream) error {
			v.SGDStepRateAtOn(g.bucketPlans[k], g.scalars, momentum, 1, l1, side)
			return v.Err()
		})
		defer s.buckets.AfterReduce(nil)
	}
	if err := s.beginReduction(); err != nil {
		return err
	}
	err = s.net.ForwardBackwardOnDevice(g.start, g.acc)
	if err == nil {
		err = s.finishReduction()
	}
	if err != nil {
		s.net.SetAfterBackward(nil)
		return err
	}
	if f == nil || byBucket {
		return s.joinReduction()
	}
	v.ResetErr()
	v.SGDStepRateAt(f.plan, g.scalars, momentum, 1, l1)
	if err := v.Err(); err != nil {
		return err
	}
	// The agreed requests' copy ran beside the update.
	return s.joinReduction()
}

// planBuckets gives a GPU rank that reduces its gradients while the
// backward pass runs (Solver.overlapped) one fused update plan per
// gradient bucket, for the recorded iteration to update each bucket's
// parameters on the all-reduces' stream as soon as their gradients are
// averaged, beside the rest of the backward pass: only the last bucket's
// update follows the backward pass. The plans are kept while the
// parameters stay the same.
func (g *iterationGraph[T]) planBuckets(s *Solver[T], f *fusedSGD[T]) error {
	if !s.overlapped() {
		return nil
	}
	groups := make([][]mathfn.SGDParam, s.buckets.Buckets())
	i := 0
	for param := range s.net.Graph().LearnableParams() {
		k := s.buckets.BucketOf(param.Learnable())
		groups[k] = append(groups[k], f.params[i])
		i++
	}
	if g.bucketPlansMatch(groups) {
		return nil
	}
	if err := g.closeBucketPlans(); err != nil {
		return err
	}
	for _, params := range groups {
		p, err := mathfn.NewSGDPlan(s.ctx.Device(), params)
		if err != nil {
			return err
		}
		g.bucketPlans = append(g.bucketPlans, p)
	}
	return nil
}

// bucketPlansMatch reports whether planBuckets' plans were made for
// these groups of parameters.
func (g *iterationGraph[T]) bucketPlansMatch(groups [][]mathfn.SGDParam) bool {
	if len(g.bucketPlans) != len(groups) {
		return false
	}
	for k, p := range g.bucketPlans {
		if !p.Matches(groups[k]) {
			return false
		}
	}
	return true
}

// closeBucketPlans frees planBuckets' plans.
func (g *iterationGraph[T]) closeBucketPlans() error {
	var errs []error
	for _, p := range g.bucketPlans {
		errs = append(errs, p.Close())
	}
	g.bucketPlans = g.bucketPlans[:0]
	return errors.Join(errs...)
}

// pinSources copies each data layer's top that reads memory of another's
// (a prefetched batch) to the graph's own buffer for it, on the compute
// stream, and makes the top read that buffer: the recorded layers then
// find every batch at the address they were recorded with.
func (g *iterationGraph[T]) pinSources(s *Solver[T]) error {
	d := s.ctx.Device()
	for i := range g.sources {
		t := &g.sources[i]
		m := t.b.Data()
		p, _ := m.DeviceBuffer()
		if !m.BorrowsDevice() || m.Head() != syncedmem.HeadAtGPU || p == t.buf {
			continue
		}
		n := t.b.Count() * int(unsafe.Sizeof(T(0)))
		if n > t.bytes {
			if err := t.grow(d, n); err != nil {
				return err
			}
		}
		if err := d.CopyDtoDAsync(t.buf, p, n, d.Stream()); err != nil {
			return err
		}
		if err := m.SetSharedGPUData(t.buf, n); err != nil {
			return err
		}
	}
	return nil
}

// grow replaces the buffer by one of n bytes, after the work queued on
// the device (an earlier replay reading it) has finished.
func (t *sourceTop[T]) grow(d *cuda.Device, n int) error {
	if t.buf != 0 {
		if err := d.Synchronize(); err != nil {
			return err
		}
		if err := d.Free(t.buf); err != nil {
			return err
		}
		t.buf, t.bytes = 0, 0
	}
	p, err := d.Alloc(n)
	if err != nil {
		return err
	}
	t.buf, t.bytes = p, n
	return nil
}

// snapshotState pushes host-side changes to the device and records the
// blobs' shapes and device addresses that the graph will hold.
func (g *iterationGraph[T]) snapshotState(s *Solver[T]) error {
	g.blobs = g.blobs[:0]
	g.blobs = append(g.blobs, s.net.Blobs()...)
	g.blobs = append(g.blobs, s.net.Params()...)
	g.blobs = append(g.blobs, s.history...)
	g.blobs = append(g.blobs, g.acc)
	g.shapes = g.shapes[:0]
	g.mems = g.mems[:0]
	for _, b := range g.blobs {
		g.shapes = append(g.shapes, slices.Clone(b.Shape()))
		g.mems = append(g.mems, b.Data(), b.Diff())
	}
	if err := g.pushHostHeads(); err != nil {
		return err
	}
	g.ptrs = g.ptrs[:0]
	for _, m := range g.mems {
		p, _ := m.DeviceBuffer()
		g.ptrs = append(g.ptrs, p)
	}
	g.wsMoves = s.ctx.WorkspaceMoves()
	return nil
}

// matches reports whether the blobs have the shapes and device addresses,
// and the workspace the place, that the graph was recorded with.
func (g *iterationGraph[T]) matches(s *Solver[T]) bool {
	if s.ctx.WorkspaceMoves() != g.wsMoves {
		return false
	}
	for i, b := range g.blobs {
		if !slices.Equal(b.Shape(), g.shapes[i]) {
			return false
		}
	}
	for i, m := range g.mems {
		if p, _ := m.DeviceBuffer(); p != g.ptrs[i] {
			return false
		}
	}
	return true
}

// pushHostHeads copies to the device every memory whose current copy is
// on the host (the host wrote it since the last replay: restored weights,
// a test's reads do not count), which the graph reads on the device.
func (g *iterationGraph[T]) pushHostHeads() error {
	for _, m := range g.mems {
		if m.Head() == syncedmem.HeadAtCPU {
			if _, err := m.GPUData(); err != nil {
				return err
			}
		}
	}
	return nil
}

// markWritten records that the replay may have written every device copy
// (syncedmem.MarkDeviceWritten), so that host reads copy back.
func (g *iterationGraph[T]) markWritten() error {
	for _, m := range g.mems {
		if m.Head() == syncedmem.Synced {
			if err := m.MarkDeviceWritten(); err != nil {
				return err
			}
		}
	}
	return nil
}

// countEager counts an iteration run as written.
func (g *iterationGraph[T]) countEager() { g.eager++ }

// salted reports whether the RNG salt is on: the recorded layers are then
// reseeded alike every iteration and draw new numbers through the salt,
// whether the iteration replays the graph or not.
func (g *iterationGraph[T]) salted() bool { return g.scalars != 0 }

// drop closes the graph; the iterations run as written until it is
// recorded again.
func (g *iterationGraph[T]) drop() error {
	g.eager, g.replays = 0, 0
	if g.graph == nil {
		return nil
	}
	err := g.graph.Close()
	g.graph = nil
	return err
}

// stop turns graphs off for the rest of the run.
func (g *iterationGraph[T]) stop(why string) error {
	g.off = why
	return g.drop()
}

// close releases the graph and the device memory it reads; the context
// keeps its salt.
func (g *iterationGraph[T]) close(s *Solver[T]) error {
	errs := []error{g.drop(), g.closeBucketPlans()}
	g.open = openReplay{}
	for i := range g.results {
		r := &g.results[i]
		for _, e := range []**cuda.Event{&r.spin, &r.asleep} {
			if *e != nil {
				errs = append(errs, (*e).Synchronize(), (*e).Close())
				*e = nil
			}
		}
		if r.loss != nil {
			errs = append(errs, s.ctx.Device().HostFree(r.loss))
			r.loss = nil
		}
	}
	if g.scalars != 0 {
		errs = append(errs, s.ctx.Device().Free(g.scalars))
		g.scalars = 0
	}
	if g.acc != nil {
		errs = append(errs, g.acc.Close())
		g.acc = nil
	}
	for i := range g.sources {
		if t := &g.sources[i]; t.buf != 0 {
			errs = append(errs, s.ctx.Device().Synchronize(), s.ctx.Device().Free(t.buf))
			t.buf, t.bytes = 0, 0
		}
	}
	return errors.Join(errs...)
}
