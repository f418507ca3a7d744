package mathfn

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel regions: the products and the loops of Parallel and
// ParallelChunks hand parts of their work to long-lived helper goroutines
// and compute the rest on the calling goroutine.
//
// A helper starts late: on the 2-vCPU AVX2 machine, GoogLeNet's batch-1
// pass ran 92 regions whose helpers started 70 us after they were handed
// their part, on average (6.3 ms a pass of 31), and the calling goroutine,
// done with its own even share, then waited 5.3 ms a pass for them. So a
// region is cut into chunks that whichever goroutine is running claims one
// at a time (region.claim): the caller goes on with the chunks no helper
// has taken, and waits only for the chunks a helper is computing, never
// for a helper that has not started. A helper that starts after the last
// chunk was claimed leaves at once; the region's job is freed (for reuse)
// by whichever goroutine leaves it last (region.refs), so that the caller
// returns without waiting for it. And a helper polls for its next task
// for a while (helperSpin) before it parks, so that the next region of a
// pass finds it running.

// region is one parallel region's bookkeeping, kept with its job and
// reused with it.
type region struct {
	chunks int
	next   atomic.Int32 // the next chunk to claim
	left   atomic.Int32 // the chunks not yet computed
	refs   atomic.Int32 // the goroutines that may still read the job
	// wake tells the caller that a helper computed the last chunk.
	wake chan struct{}
}

// start readies the region for chunks chunks, held by the caller alone.
func (r *region) start(chunks int) {
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	r.chunks = chunks
	r.next.Store(0)
	r.left.Store(int32(chunks))
	r.refs.Store(1)
}

// claim returns the next chunk not yet claimed; false when none is left.
func (r *region) claim() (int, bool) {
	c := int(r.next.Add(1)) - 1
	return c, c < r.chunks
}

// finish records a computed chunk and reports whether it was the last. A
// helper (helper true) that computes the last tells the caller, who then
// waits for nothing more.
func (r *region) finish(helper bool) bool {
	if r.left.Add(-1) != 0 {
		return false
	}
	if helper {
		r.wake <- struct{}{}
	}
	return true
}

// leave drops a goroutine's hold on the job and reports whether it was the
// last: the job may then be reused.
func (r *region) leave() bool { return r.refs.Add(-1) == 0 }

// regionJob is a region's work as its goroutines see it.
type regionJob interface {
	// work computes chunks until none is left to claim and reports
	// whether this goroutine computed the last (region.finish); slot
	// (0 <= slot < the region's goroutines) is the goroutine's own.
	work(slot int, helper bool) bool
	// leave is region.leave, freeing the job where it was the last.
	leave()
	reg() *region
}

// runRegion computes job, whose region was started, on the calling
// goroutine (slot helpers) and up to helpers helper goroutines (slots 0
// to helpers-1, each where one is idle: a busy pool leaves its chunks to
// the others), and returns once every chunk is computed. The caller's
// hold on the job ends here: it must not touch the job after.
func runRegion(job regionJob, helpers int) {
	r := job.reg()
	for w := range helpers {
		r.refs.Add(1)
		if !gemmPool.try(job, w) {
			r.refs.Add(-1)
		}
	}
	if !job.work(helpers, false) {
		<-r.wake
	}
	job.leave()
}

// Parallel runs body over [0, n), cut into at most GOMAXPROCS contiguous
// ranges: body(part, lo, hi) computes [lo, hi) as part part (0 <= part <
// Parts(n)), each part once, so that it can use scratch memory of its
// own. The calling goroutine and long-lived helpers claim the parts (a
// helper that starts late finds them taken); it returns when all are done
// and allocates nothing (give it a body made once, e.g. a method value
// kept in a struct, not a new closure per call). Inside body, use
// GemmSerial: the parts already use the cores.
func Parallel(n int, body func(part, lo, hi int)) {
	parts := Parts(n)
	if parts <= 1 {
		if n > 0 {
			body(0, 0, n)
		}
		return
	}
	j := forJobs.get()
	j.body, j.n, j.parts, j.chunked = body, n, parts, false
	j.region.start(parts)
	runRegion(j, parts-1)
}

// parallelChunksPerPart is how many chunks ParallelChunks cuts each part's
// share into: enough that a late helper's share is taken up by the
// others, few enough that claiming one costs nothing beside it.
const parallelChunksPerPart = 4

// ParallelChunks is Parallel for a body that may be called several times
// per part with ranges of its own: [0, n) is cut into up to
// parallelChunksPerPart chunks per part, and body(part, lo, hi) computes
// [lo, hi) on the goroutine that holds part's scratch (0 <= part <
// Parts(n)), each range once, the ranges of one part one after the other.
// A body that keeps state across its range (a running sum), or sums into
// one result per part, must use Parallel.
func ParallelChunks(n int, body func(part, lo, hi int)) { parallelChunksOn(Parts(n), n, body) }

// parallelChunksOn is ParallelChunks on parts goroutines (at most
// GOMAXPROCS).
func parallelChunksOn(parts, n int, body func(part, lo, hi int)) {
	if parts <= 1 {
		if n > 0 {
			body(0, 0, n)
		}
		return
	}
	j := forJobs.get()
	j.body, j.n, j.parts, j.chunked = body, n, parts, true
	j.region.start(min(n, parts*parallelChunksPerPart))
	runRegion(j, parts-1)
}

// Parts returns how many parts Parallel cuts n items into.
func Parts(n int) int { return max(min(n, runtime.GOMAXPROCS(0)), 1) }

// forJob is a Parallel or ParallelChunks call shared by its goroutines.
type forJob struct {
	body     func(part, lo, hi int)
	n, parts int
	chunked  bool // ParallelChunks: chunks of a part's share, body given the slot
	region   region
}

func (j *forJob) reg() *region { return &j.region }

func (j *forJob) work(slot int, helper bool) bool {
	last := false
	r := &j.region
	for {
		c, ok := r.claim()
		if !ok {
			return last
		}
		lo, hi := c*j.n/r.chunks, (c+1)*j.n/r.chunks
		part := c // Parallel: the part is the chunk
		if j.chunked {
			part = slot
		}
		j.body(part, lo, hi)
		if r.finish(helper) {
			last = true
		}
	}
}

func (j *forJob) leave() {
	if j.region.leave() {
		j.body = nil // hold no caller's memory in the list
		forJobs.put(j)
	}
}

// gemmPool runs the helper goroutines of parallel regions: long-lived,
// so that a region starts none and allocates nothing.
var gemmPool workerPool

type poolTask struct {
	job regionJob
	w   int
}

// A helper's states: parked (waiting on the pool's channel, or about to),
// spinning (polling for a task), claimed (a region is handing it one).
const (
	helperParked int32 = iota
	helperSpinning
	helperClaimed
)

// helper is one helper goroutine's mailbox.
type helper struct {
	state atomic.Int32
	ready atomic.Bool // task is written (after claimed)
	task  poolTask
}

type workerPool struct {
	once    sync.Once
	tasks   chan poolTask // to parked helpers
	helpers []helper
}

// helperSpin is how long a helper polls for its next task after one
// before it parks. A parked helper is woken by the kernel, and on the
// 2-vCPU KVM machine its idle vCPU then took about 70 us to run it
// (GoogLeNet's batch-1 pass: 92 regions, 6.3 ms of such starts a pass of
// 31); one still polling takes a task at once, and the regions of a pass
// follow each other within this. Polling 200 us and 1 ms gave the same
// pass times there (24.6-31.1 and 25.3-29.7 ms against 29.0-33.8 parked
// at once); the shorter burns less of a core an idle process does not
// need.
const helperSpin = 200 * time.Microsecond

func (p *workerPool) start() {
	p.tasks = make(chan poolTask)
	// Twice as many helpers as CPUs, so that one is idle when the region
	// before's are still leaving it.
	p.helpers = make([]helper, 2*max(runtime.NumCPU(), 2))
	for i := range p.helpers {
		go p.helpers[i].loop(p.tasks)
	}
}

// spinOff, while the clock (UnixNano) is before it, has helpers park
// right after each task: a helper found it lost its CPU while polling
// (spinLostGap), as on a machine with more runnable threads than CPUs. There
// polling did harm: the kernel charges the polling thread its time and then
// preempts it in the middle of its next chunk, or gives it the core the
// region's caller needs (GoogLeNet b1 at a load average of 8: 66.5 ms
// polling 200 us, 50.6 parked at once). A thread that slept is run as soon
// as it is woken. spinBackoff is how long the last such pause was: it
// doubles (from spinOffMin to spinOffMax) each time polling, resumed, loses
// the CPU again, and is forgotten once a helper polls its whole helperSpin
// undisturbed. With a pause of 20 ms alone, a machine with one core's worth
// of other work lost it again every pause: 50-110 ms passes against 45
// parked at once.
var spinOff, spinBackoff atomic.Int64

const (
	// spinLostGap is the longest a polling helper's round (a check and a
	// runtime.Gosched) may take before it counts as preempted: a round
	// takes a few microseconds.
	spinLostGap = 50 * time.Microsecond
	spinOffMin  = 20 * time.Millisecond
	spinOffMax  = time.Second
)

// spinLost pauses polling (spinOff) after a helper lost its CPU at now.
func spinLost(now time.Time) {
	b := time.Duration(spinBackoff.Load())
	b = min(max(2*b, spinOffMin), spinOffMax)
	spinBackoff.Store(int64(b))
	spinOff.Store(now.Add(b).UnixNano())
}

// loop runs the helper's tasks: polling for the next one for helperSpin
// after each (unless spinOff says not to), then parked on tasks.
func (h *helper) loop(tasks chan poolTask) {
	for {
		if time.Now().UnixNano() >= spinOff.Load() {
			h.spin()
		} else {
			h.state.Store(helperParked)
		}
		t := <-tasks
		t.job.work(t.w, true)
		t.job.leave()
	}
}

// spin polls for tasks and runs them until helperSpin passes without one,
// or the helper loses its CPU; then it marks the helper parked.
func (h *helper) spin() {
	h.state.Store(helperSpinning)
	last := time.Now()
	deadline := last.Add(helperSpin)
	for {
		if h.state.Load() == helperClaimed {
			for !h.ready.Load() { // the claimer is writing the task
				runtime.Gosched()
			}
			t := h.task
			h.task = poolTask{}
			h.ready.Store(false)
			t.job.work(t.w, true)
			t.job.leave()
			h.state.Store(helperSpinning)
			last = time.Now()
			deadline = last.Add(helperSpin)
			continue
		}
		now := time.Now()
		lost := now.Sub(last) > spinLostGap
		if lost {
			spinLost(now)
		}
		last = now
		if (lost || now.After(deadline)) && h.state.CompareAndSwap(helperSpinning, helperParked) {
			if !lost {
				spinBackoff.Store(0) // a whole poll undisturbed
			}
			return
		}
		// Yield the core to the process's other goroutines, keeping the
		// thread (and its vCPU) awake.
		runtime.Gosched()
	}
}

// try hands job's slot w to an idle helper and reports whether one took
// it: a polling one first, else a parked one. A region never waits for a
// helper to be free (one still leaving the region before may be), as its
// own goroutine computes what no helper takes.
func (p *workerPool) try(job regionJob, w int) bool {
	p.once.Do(p.start)
	for i := range p.helpers {
		h := &p.helpers[i]
		if h.state.Load() == helperSpinning && h.state.CompareAndSwap(helperSpinning, helperClaimed) {
			h.task = poolTask{job, w}
			h.ready.Store(true)
			return true
		}
	}
	select {
	case p.tasks <- poolTask{job, w}:
		return true
	default:
		return false
	}
}
