package parallel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocaffe/gocaffe/cuda"
)

// timeline is the timing events of one pass of GradientBuckets: when the
// pass began and its backward pass ended on the compute stream, and when
// each bucket's all-reduce began and ended on the side stream.
type timeline struct {
	start, backward *cuda.Event
	begin, end      []*cuda.Event
}

// EnableTimeline makes each pass record timing events, which Timeline
// reads: for profiling a pass run as written (a CUDA graph records no
// event timings).
func (g *GradientBuckets[T]) EnableTimeline() error {
	if g.timeline != nil {
		return nil
	}
	t := &timeline{}
	g.timeline = t
	var err error
	if t.start, err = g.dev.NewEvent(); err != nil {
		return err
	}
	if t.backward, err = g.dev.NewEvent(); err != nil {
		return err
	}
	for range g.buckets {
		b, err := g.dev.NewEvent()
		if err != nil {
			return err
		}
		t.begin = append(t.begin, b)
		e, err := g.dev.NewEvent()
		if err != nil {
			return err
		}
		t.end = append(t.end, e)
	}
	return nil
}

// Timeline describes the last pass, in milliseconds from its start, e.g.
// "passes 0.00-12.31 ms; bucket 0 (1.0 MB, after layer 170) 4.10-4.18;
// ...": whether the all-reduces ran while the backward pass did. The pass
// must have finished on the device.
func (g *GradientBuckets[T]) Timeline() (string, error) {
	t := g.timeline
	if t == nil {
		return "", errors.New("parallel: Timeline without EnableTimeline")
	}
	at := func(e *cuda.Event) (float32, error) { return cuda.ElapsedMillis(t.start, e) }
	end, err := at(t.backward)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "forward and backward 0.00-%.2f ms", end)
	for k, bk := range g.buckets {
		from, err := at(t.begin[k])
		if err != nil {
			return "", err
		}
		to, err := at(t.end[k])
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "; bucket %d (%.1f MB, after layer %d) all-reduced %.2f-%.2f", k, float64(bk.n*elemBytes[T]())/1e6, bk.after, from, to)
	}
	return b.String(), nil
}

// close frees the events; t may be nil.
func (t *timeline) close() error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, e := range append([]*cuda.Event{t.start, t.backward}, append(t.begin, t.end...)...) {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	return errors.Join(errs...)
}
