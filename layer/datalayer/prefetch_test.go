package datalayer

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
)

// fakeLoader fills batch k with the value k; it fails or panics at the
// batch numbers it is given and records misuse.
type fakeLoader struct {
	n         int
	failAt    int // -1: never
	panicAt   int // -1: never
	delay     time.Duration
	loading   atomic.Bool
	closes    atomic.Int32
	misuse    atomic.Bool // close while loading, or load after close
	closedNow atomic.Bool
}

func newFakeLoader() *fakeLoader { return &fakeLoader{failAt: -1, panicAt: -1} }

func (f *fakeLoader) load(b *batch[float32]) error {
	f.loading.Store(true)
	defer f.loading.Store(false)
	if f.closedNow.Load() {
		f.misuse.Store(true)
	}
	time.Sleep(f.delay)
	k := f.n
	f.n++
	switch k {
	case f.failAt:
		return errors.New("record 7 is bad")
	case f.panicAt:
		var m map[string]int
		m["boom"]++ // a programmer's error: nil map
	}
	for i := range b.data.MutableCPUData() {
		b.data.MutableCPUData()[i] = float32(k)
	}
	if b.label != nil {
		b.label.MutableCPUData()[0] = float32(k)
	}
	return nil
}

func (f *fakeLoader) close() error {
	if f.loading.Load() {
		f.misuse.Store(true)
	}
	f.closedNow.Store(true)
	f.closes.Add(1)
	return nil
}

func newTestPrefetcher(t *testing.T, f *fakeLoader, ahead int) *prefetcher[float32] {
	t.Helper()
	var b layer.Base[float32]
	p, err := newPrefetcher[float32](&b, f, ahead, []int{2, 3}, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.close() })
	return p
}

// waitFor polls cond for up to two seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestPrefetchRunsAheadByPrefetch: the goroutine loads exactly `prefetch`
// batches ahead and one more for each batch Forward gives back; without
// prefetching nothing is loaded before Forward asks.
func TestPrefetchRunsAheadByPrefetch(t *testing.T) {
	f := newFakeLoader()
	p := newTestPrefetcher(t, f, 3)
	if len(p.batches) != 3 {
		t.Fatalf("%d batches for prefetch 3", len(p.batches))
	}
	waitFor(t, "three batches", func() bool { return len(p.full) == 3 })
	time.Sleep(20 * time.Millisecond)
	if n := p.loaded.Load(); n != 3 {
		t.Fatalf("loaded %d batches with 3 ahead and none consumed", n)
	}
	for want := range 5 {
		b, err := p.next()
		if err != nil {
			t.Fatal(err)
		}
		if v := b.data.CPUData()[0]; v != float32(want) {
			t.Fatalf("batch %d holds %v: out of order", want, v)
		}
		p.release(b)
		waitFor(t, "a refill", func() bool { return p.loaded.Load() == int64(want+4) })
	}

	g := newFakeLoader()
	q := newTestPrefetcher(t, g, 0)
	if len(q.batches) != 1 || q.async || q.loaded.Load() != 0 {
		t.Fatalf("prefetch 0: %d batches, async %v, %d loaded; want 1, false, 0", len(q.batches), q.async, q.loaded.Load())
	}
	for want := range 3 {
		b, err := q.next()
		if err != nil || b.data.CPUData()[0] != float32(want) || q.loaded.Load() != int64(want+1) {
			t.Fatalf("prefetch 0, batch %d: %v, %v", want, err, b)
		}
		q.release(b)
	}
}

// TestPrefetchErrorsSurfaceInOrder: the batches loaded before a failure are
// served, then the error, on every later call; the goroutine has ended.
func TestPrefetchErrorsSurfaceInOrder(t *testing.T) {
	for _, ahead := range []int{0, 4} {
		f := newFakeLoader()
		f.failAt = 2
		p := newTestPrefetcher(t, f, ahead)
		for k := range 2 {
			b, err := p.next()
			if err != nil {
				t.Fatalf("ahead %d: batch %d: %v", ahead, k, err)
			}
			p.release(b)
		}
		for range 3 {
			if _, err := p.next(); err == nil || err.Error() != "record 7 is bad" {
				t.Fatalf("ahead %d: got %v, want the loader's error", ahead, err)
			}
		}
		if ahead > 0 {
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
				t.Fatal("the goroutine did not end after the error")
			}
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPrefetchRecoversPanics: a panic while loading becomes an error.
func TestPrefetchRecoversPanics(t *testing.T) {
	f := newFakeLoader()
	f.panicAt = 1
	p := newTestPrefetcher(t, f, 2)
	b, err := p.next()
	if err != nil {
		t.Fatal(err)
	}
	p.release(b)
	_, err = p.next()
	if err == nil || !strings.Contains(err.Error(), "panic while loading a batch") || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("got %v, want the recovered panic", err)
	}
}

// TestPrefetchClose: Close stops a goroutine that waits for a free batch
// and one that is loading (waiting for the load to end before closing the
// source), closes the source once, and Forward then fails.
func TestPrefetchClose(t *testing.T) {
	idle := newFakeLoader()
	p := newTestPrefetcher(t, idle, 2)
	waitFor(t, "a full queue", func() bool { return len(p.full) == 2 })
	closeWithin(t, p)

	busy := newFakeLoader()
	busy.delay = 30 * time.Millisecond
	q := newTestPrefetcher(t, busy, 2)
	waitFor(t, "a load in progress", busy.loading.Load)
	closeWithin(t, q)
	for _, f := range []*fakeLoader{idle, busy} {
		if f.closes.Load() != 1 || f.misuse.Load() {
			t.Errorf("source closed %d times, misuse %v; want once, none", f.closes.Load(), f.misuse.Load())
		}
	}
	if _, err := q.next(); !errors.Is(err, errClosed) {
		t.Errorf("next after close: %v", err)
	}
}

// TestPrefetchWaitEndsWhenStopped: a Forward waiting for a batch returns
// errClosed, rather than waiting forever, when the goroutine stops without
// sending one (as when the layer is closed meanwhile).
func TestPrefetchWaitEndsWhenStopped(t *testing.T) {
	p := newTestPrefetcher(t, newFakeLoader(), 1)
	held, err := p.next() // the only batch: the goroutine now waits for it
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := p.next()
		got <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait on the full queue
	close(p.stop)
	select {
	case err := <-got:
		if !errors.Is(err, errClosed) {
			t.Errorf("waiting next after the goroutine stopped: %v, want errClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("next still waits after the goroutine stopped")
	}
	p.stop = make(chan struct{}) // for the cleanup's close; the goroutine is gone
	p.release(held)
}

func closeWithin(t *testing.T, p *prefetcher[float32]) {
	t.Helper()
	done := make(chan error)
	go func() { done <- p.close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("close did not return")
	}
	if err := p.close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// TestCopyBatchDoesNotAllocate covers the host copy into the tops.
func TestCopyBatchDoesNotAllocate(t *testing.T) {
	f := newFakeLoader()
	p := newTestPrefetcher(t, f, 0)
	top := []*blob.Blob[float32]{mustBlob(t), mustBlob(t)}
	if err := forwardBatch(p, top); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { forwardBatch(p, top) }); n != 0 {
		t.Errorf("forwardBatch allocates %v times", n)
	}
}

func mustBlob(t *testing.T) *blob.Blob[float32] {
	b, err := blob.New[float32]()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadSlots: a beginning batch never gets the state of the batch
// begun before it (which may still be loading), a batch finds its own
// state, and one batch loading over and over keeps one state.
func TestLoadSlots(t *testing.T) {
	var l loadSlots[int, int]
	seen := map[*int]bool{}
	prev := 0
	for i, b := range []int{1, 2, 3, 4, 1, 2, 3, 4, 1} {
		s := l.take(b)
		seen[s] = true
		if prev != 0 && l.of(prev) == s {
			t.Fatalf("take %d (batch %d) got the state of batch %d, begun before it", i, b, prev)
		}
		if l.of(b) != s {
			t.Fatalf("take %d: batch %d does not find its state", i, b)
		}
		prev = b
	}
	if len(seen) != 2 {
		t.Errorf("%d states made, want 2", len(seen))
	}
	var one loadSlots[int, int]
	s := one.take(7)
	for range 3 {
		if one.take(7) != s {
			t.Fatal("one batch loading over again changed state")
		}
	}
}
