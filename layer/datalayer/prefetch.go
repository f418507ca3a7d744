package datalayer

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/internal/sysmem"

	"github.com/gocaffe/gocaffe/blob"
)

// This file is Caffe's BasePrefetchingDataLayer for Go: a goroutine fills
// batches ahead of the net while Forward hands out the ones that are ready.
//
// A fixed set of batches circulates between two channels, free and full,
// each with room for all of them, so a send never blocks: the goroutine
// takes a batch from free, loads it (and in GPU mode pushes it to the
// device on its own stream), and sends it to full; Forward receives from
// full, copies the batch into its tops and sends it back to free (in GPU
// mode the tops share the batch's device memory instead, and the batch
// goes back at the next Forward). Nothing is allocated per batch once the
// set is made.
//
// A loading error travels in the batch: the goroutine sends the failed
// batch to full and exits, and Forward returns the error, then and on
// every later call. The goroutine recovers panics into such errors, so a
// bad record can never take the process down or leave Forward waiting.

// errClosed is returned by Forward after Close.
var errClosed = errors.New("the layer is closed")

// batch is one prefetched batch: data and, for layers with a label top,
// labels.
type batch[T layer.Float] struct {
	data, label *blob.Blob[T]
	err         error
	dev         batchDevice   // device-side state (prefetch_gpu.go)
	pix         *pixelStaging // nil unless the device finishes transformations (prefetch_pixels.go)
}

// batchLoader is what a data layer's reading state provides: load fills a
// batch (Caffe's load_batch), close releases the source. Both run on the
// prefetch goroutine (or, without prefetching, in Forward), never
// concurrently.
type batchLoader[T layer.Float] interface {
	load(b *batch[T]) error
	close() error
}

// splitLoader is a batchLoader whose batches load in two steps, so that
// the next batch can begin while one finishes and the cores that decode
// never wait between batches: begin reads the batch and hands the slow
// work (decoding) to other goroutines, calling flush (which finishes the
// batch begun before) ahead of anything that must follow that batch's
// finish, such as a random draw; finish waits for the work and completes
// the batch. load is begin then finish.
type splitLoader[T layer.Float] interface {
	batchLoader[T]
	begin(b *batch[T], flush func() error) error
	finish(b *batch[T]) error
}

// prefetcher runs a batchLoader ahead of Forward.
type prefetcher[T layer.Float] struct {
	loader  batchLoader[T]
	batches []*batch[T]
	async   bool // a goroutine loads ahead; otherwise Forward loads
	free    chan *batch[T]
	full    chan *batch[T]
	stop    chan struct{}
	done    chan struct{}
	loaded  atomic.Int64 // batches loaded so far, for tests
	// deviceTransformed counts the batches whose transformation the
	// device finished (prefetch_pixels.go), for tests.
	deviceTransformed atomic.Int64
	// waits counts the batches the layer had to wait for: all of them when
	// it loads them itself, else those not loaded yet when asked for
	// (prefetch_jpeg.go gives nvJPEG more of the decoding while it grows).
	waits atomic.Int64
	err   error // the first loading error, returned ever after
	dev   prefetchDevice[T]
	// With a splitLoader: the batch begun and not finished yet, and
	// flushPending as a value made once.
	split    splitLoader[T]
	pending  *batch[T]
	flush    func() error
	once     sync.Once
	closeErr error
}

// newPrefetcher makes the batches (ahead of them, or one when ahead is 0
// and Forward loads synchronously) on b's device, shaped dataShape and
// labelShape (nil: no labels), and starts loading. On error the loader is
// closed.
func newPrefetcher[T layer.Float](b *layer.Base[T], loader batchLoader[T], ahead int, dataShape, labelShape []int) (*prefetcher[T], error) {
	p := &prefetcher[T]{loader: loader, async: ahead > 0}
	if split, ok := loader.(splitLoader[T]); ok {
		p.split = split
		p.flush = p.flushPending
	}
	fail := func(err error) (*prefetcher[T], error) {
		p.releaseAll()
		loader.close()
		return nil, err
	}
	if err := checkBatchMemory[T](ahead, dataShape, labelShape); err != nil {
		return fail(err)
	}
	for range max(ahead, 1) {
		bt, err := newBatch(b, dataShape, labelShape)
		if err != nil {
			return fail(err)
		}
		p.batches = append(p.batches, bt)
	}
	if err := initDevice(p, b.Context()); err != nil {
		return fail(err)
	}
	if p.async {
		p.start()
	}
	return p, nil
}

// reshapeData shapes the batch's data for a batch of items of another
// shape. Growing replaces the data's memory, so in GPU mode the compute
// work that may still read the old device memory (marked by copied) is
// waited for first; reshaping is rare (a change of image size).
func (b *batch[T]) reshapeData(shape []int) error {
	if slices.Equal(b.data.Shape(), shape) {
		return nil
	}
	if b.dev.copied != nil {
		if err := b.dev.copied.Synchronize(); err != nil {
			return fmt.Errorf("waiting for the batch's last use before reshaping it: %w", err)
		}
	}
	return b.data.Reshape(shape)
}

// batchItem is the shape of the batch's items: channels, rows, columns.
func batchItem[T layer.Float](b *batch[T]) [3]int {
	s := b.data.Shape()
	return [3]int{s[1], s[2], s[3]}
}

func newBatch[T layer.Float](b *layer.Base[T], dataShape, labelShape []int) (*batch[T], error) {
	bt := &batch[T]{}
	var err error
	if bt.data, err = b.NewBlob(dataShape...); err != nil {
		return nil, err
	}
	if labelShape != nil {
		if bt.label, err = b.NewBlob(labelShape...); err != nil {
			return nil, err
		}
	}
	return bt, nil
}

func (p *prefetcher[T]) start() {
	n := len(p.batches)
	p.free, p.full = make(chan *batch[T], n), make(chan *batch[T], n)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	for _, b := range p.batches {
		p.free <- b
	}
	go p.run()
}

// run is the prefetch goroutine.
func (p *prefetcher[T]) run() {
	defer close(p.done)
	if p.split != nil {
		p.runSplit()
		return
	}
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		var b *batch[T]
		select {
		case <-p.stop:
			return
		case b = <-p.free:
		}
		b.err = p.fill(b)
		p.full <- b // never blocks: full has room for every batch
		if b.err != nil {
			return
		}
	}
}

// runSplit is run for a splitLoader: each batch finishes after the next
// one has begun (or when no batch is free to begin), so that the next
// batch's records are read and decoding while this one's last records
// decode and its transformation runs.
func (p *prefetcher[T]) runSplit() {
	for {
		b := p.takeFree()
		if b == nil {
			return
		}
		if b.err = p.beginFill(b); b.err != nil {
			if p.flushPending() == nil { // the batch before goes first
				p.full <- b
			}
			return
		}
		if p.flushPending() != nil {
			return
		}
		p.pending = b
	}
}

// takeFree returns the next free batch, finishing the pending batch first
// when none is free (Forward may be waiting for it); nil once stopped or
// when the pending batch failed.
func (p *prefetcher[T]) takeFree() *batch[T] {
	select {
	case <-p.stop:
		return nil
	default:
	}
	select {
	case b := <-p.free:
		return b
	default:
	}
	if p.flushPending() != nil {
		return nil
	}
	select {
	case <-p.stop:
		return nil
	case b := <-p.free:
		return b
	}
}

// flushPending finishes the pending batch, if any, and sends it to Forward;
// it returns the batch's error.
func (p *prefetcher[T]) flushPending() error {
	b := p.pending
	if b == nil {
		return nil
	}
	p.pending = nil
	b.err = p.finishFill(b)
	p.full <- b // never blocks: full has room for every batch
	return b.err
}

// beginFill begins loading a batch once its last push to the device has
// ended.
func (p *prefetcher[T]) beginFill(b *batch[T]) (err error) {
	defer recoverLoad(&err)
	if err := awaitPush(p, b); err != nil {
		return err
	}
	return p.split.begin(b, p.flush)
}

// finishFill finishes loading a batch and moves it to the device.
func (p *prefetcher[T]) finishFill(b *batch[T]) (err error) {
	defer recoverLoad(&err)
	if err := p.split.finish(b); err != nil {
		return err
	}
	p.loaded.Add(1)
	return pushToDevice(p, b)
}

// recoverLoad, deferred, turns a panic while loading into an error.
func recoverLoad(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("panic while loading a batch: %v\n%s", r, debug.Stack())
	}
}

// fill loads one batch and moves it to the device, turning a panic into
// an error.
func (p *prefetcher[T]) fill(b *batch[T]) (err error) {
	defer recoverLoad(&err)
	if err := awaitPush(p, b); err != nil {
		return err
	}
	if err := p.loader.load(b); err != nil {
		return err
	}
	p.loaded.Add(1)
	return pushToDevice(p, b)
}

// next returns the next loaded batch; give it back with release.
func (p *prefetcher[T]) next() (*batch[T], error) {
	if p.closed() {
		return nil, errClosed
	}
	if p.err != nil {
		return nil, p.err
	}
	if !p.async || len(p.full) == 0 {
		p.waits.Add(1)
	}
	if !p.async {
		b := p.batches[0]
		if p.err = p.fill(b); p.err != nil {
			return nil, p.err
		}
		return b, nil
	}
	// The goroutine exits after sending a failed batch, or when stopped:
	// should Close run while this Forward waits (which the layers do not
	// support, but must not hang on), the goroutine's end ends the wait.
	var b *batch[T]
	select {
	case b = <-p.full:
	case <-p.done:
		select {
		case b = <-p.full: // the failed batch it sent before exiting
		default:
			return nil, errClosed
		}
	}
	if b.err != nil {
		p.err = b.err
		return nil, p.err
	}
	return b, nil
}

// release gives a batch back for loading.
func (p *prefetcher[T]) release(b *batch[T]) {
	if p.async {
		p.free <- b // never blocks: free has room for every batch
	}
}

func (p *prefetcher[T]) closed() bool { return p.batches == nil }

// close stops the goroutine, then releases the source and the batches'
// device and pinned memory. It is safe to call more than once, and from
// the layer's cleanup.
func (p *prefetcher[T]) close() error {
	p.once.Do(func() {
		if p.async {
			close(p.stop)
			<-p.done
		}
		p.closeErr = errors.Join(p.loader.close(), closeDevice(p), p.releaseAll())
	})
	return p.closeErr
}

// releaseAll frees the batches' blobs.
func (p *prefetcher[T]) releaseAll() error {
	var errs []error
	for _, b := range p.batches {
		errs = append(errs, b.data.Close())
		if b.label != nil {
			errs = append(errs, b.label.Close())
		}
	}
	p.batches = nil
	return errors.Join(errs...)
}

// copyBatch copies a batch into the tops on the host (the tops' own
// memory: a later layer may write into them in place).
func copyBatch[T layer.Float](b *batch[T], top []*blob.Blob[T]) error {
	if err := top[0].CopyFrom(b.data, false, true); err != nil {
		return err
	}
	if len(top) > 1 && b.label != nil {
		return top[1].CopyFrom(b.label, false, true)
	}
	return nil
}

// forwardBatch is the CPU forward of every prefetching layer.
func forwardBatch[T layer.Float](p *prefetcher[T], top []*blob.Blob[T]) error {
	b, err := p.next()
	if err != nil {
		return err
	}
	defer p.release(b)
	return copyBatch(b, top)
}

// prefetching is the state every prefetching layer embeds: its
// prefetcher, and the cleanup that stops the goroutine should the layer be
// dropped without Close.
type prefetching[T layer.Float] struct {
	pf      *prefetcher[T]
	cleanup runtime.Cleanup
}

var errNotSetUp = errors.New("the layer is not set up")

// startPrefetching starts loading from src into batches on b's device and
// attaches the cleanup to owner, the layer. The goroutine holds the
// prefetcher, never the layer, so a dropped layer can be collected and its
// cleanup then stops the goroutine and closes the source.
func startPrefetching[T layer.Float, L any](owner *L, pp *prefetching[T], b *layer.Base[T], src batchLoader[T], shape, labelShape []int) error {
	pf, err := newPrefetcher(b, src, prefetchCount(b), shape, labelShape)
	if err != nil {
		return err
	}
	pp.pf = pf
	pp.cleanup = runtime.AddCleanup(owner, func(p *prefetcher[T]) { p.close() }, pf)
	return nil
}

// forward is the CPU forward of a prefetching layer.
func (pp *prefetching[T]) forward(top []*blob.Blob[T]) error {
	if pp.pf == nil {
		return errNotSetUp
	}
	err := forwardBatch(pp.pf, top)
	// pp lies inside the layer, whose cleanup closes the prefetcher: were
	// the caller's last use of the layer this Forward, a collection during
	// the copy could otherwise free the batch being read.
	runtime.KeepAlive(pp)
	return err
}

// Close stops prefetching and closes the layer's source (database, list
// of images). It is safe to call more than once; Forward fails afterwards.
// Like every layer method it must not run concurrently with Forward.
func (pp *prefetching[T]) Close() error {
	if pp.pf == nil {
		return nil
	}
	pp.cleanup.Stop()
	return pp.pf.close()
}

// loadSlots holds a splitLoader's loading states (S: buffers, waits) for
// the two batches that may be loading at once, the one begun and the one
// finishing: take gives a beginning batch the state the batch before the
// last left (made on first use), of finds a batch's state. Two, not one
// per batch, so that the buffers in them cost twice a batch's, not
// prefetch times.
type loadSlots[B comparable, S any] struct {
	owner [2]B
	state [2]*S
	next  int
}

// take returns the state for b, which begins loading: the other one than
// the state taken last, which the batch still loading may hold, or the
// one b held last time (free too: b is not the batch still loading), so
// that one batch loading over and over (no prefetch) uses one state.
func (l *loadSlots[B, S]) take(b B) *S {
	k := l.next
	if l.owner[1-k] == b {
		k = 1 - k
	}
	l.next = 1 - k
	if l.state[k] == nil {
		l.state[k] = new(S)
	}
	l.owner[k] = b
	return l.state[k]
}

// of returns b's state; b must hold one (take).
func (l *loadSlots[B, S]) of(b B) *S {
	if l.owner[0] == b {
		return l.state[0]
	}
	return l.state[1]
}

// loaderJob is one piece of a batch's loading (an image to decode) for a
// loaderPool: run does it and tells the batch it is done.
type loaderJob interface{ run() }

// loaderPool runs a source's loaderJobs on loaderWorkers goroutines as
// they are handed over, for every batch, until stop. One pool serves the
// source so that two batches loading at once (splitLoader) share the
// cores rather than each starting goroutines of its own.
type loaderPool struct {
	jobs chan loaderJob
	wg   sync.WaitGroup
}

// startLoaderPool starts the workers, with room for queue jobs waiting.
func startLoaderPool(queue int) *loaderPool {
	p := &loaderPool{jobs: make(chan loaderJob, queue)}
	for range loaderWorkers() {
		p.wg.Go(func() {
			for j := range p.jobs {
				j.run()
			}
		})
	}
	return p
}

// add hands a job over; it waits while the queue is full.
func (p *loaderPool) add(j loaderJob) { p.jobs <- j }

// stop waits until every job handed over is done and ends the workers; a
// nil pool has nothing to stop.
func (p *loaderPool) stop() {
	if p == nil {
		return
	}
	close(p.jobs)
	p.wg.Wait()
}

// inParallel runs work(0), ..., work(n-1) on up to GOMAXPROCS goroutines
// and waits for them. A panic in work(i) becomes failed(i, err): it must
// not take the process down, and fill's recover only covers the calling
// goroutine.
func inParallel(n int, work func(i int) error, failed func(i int, err error)) {
	safe := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				failed(i, fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
			}
		}()
		if err := work(i); err != nil {
			failed(i, err)
		}
	}
	workers := min(n, loaderWorkers())
	if workers <= 1 {
		for i := range n {
			safe(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				safe(i)
			}
		})
	}
	wg.Wait()
}

// loaderWorkers is how many goroutines decode and transform a batch: all
// the cores but one on machines of more than four, so that the goroutine
// running the net (launching the GPU's work, which stalls when it waits
// for a core) keeps one.
func loaderWorkers() int {
	n := runtime.GOMAXPROCS(0)
	if n > 4 {
		return n - 1
	}
	return n
}

// prefetchCount is data_param.prefetch, which Caffe reads for every
// prefetching layer (ImageData included).
func prefetchCount[T layer.Float](b *layer.Base[T]) int {
	return int(b.Param().GetDataParam().GetPrefetch())
}

// checkBatchMemory refuses batches that cannot fit in the memory the
// process has left: the prefetched batches and the tops they are copied
// into, each data plus labels. Without it a batch_size x prefetch too large
// is found by the kernel (the out-of-memory killer) or ends in the Go
// runtime's fatal error, neither naming the layer.
func checkBatchMemory[T layer.Float](ahead int, dataShape, labelShape []int) error {
	perBatch := float64(shapeCount(dataShape)+shapeCount(labelShape)) * float64(unsafe.Sizeof(T(0)))
	batches := max(ahead, 1) + 1
	need := perBatch * float64(batches)
	avail, limitedBy, ok := sysmem.Available()
	if !ok || need <= float64(avail) {
		return nil
	}
	return fmt.Errorf("%d batches of shape %v (prefetch %d, and the tops) need %s, but only %s can be allocated (%s): lower batch_size or data_param.prefetch",
		batches, dataShape, ahead, byteSize(need), byteSize(float64(avail)), limitedBy)
}

// shapeCount is the number of elements of a shape (0 for nil), in float64
// so that absurd shapes cannot overflow.
func shapeCount(shape []int) float64 {
	if shape == nil {
		return 0
	}
	n := 1.0
	for _, d := range shape {
		n *= float64(d)
	}
	return n
}

// byteSize writes a byte count for people.
func byteSize(b float64) string {
	const unit = 1024.0
	for i, suffix := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if b < unit || i == 4 {
			return fmt.Sprintf("%.1f %s", b, suffix)
		}
		b /= unit
	}
	return ""
}
