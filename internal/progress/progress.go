// Package progress reports how far a long conversion has got.
//
// On a terminal it keeps one status line up to date in place (items done,
// rate, time left), redrawn at most a few times a second so that drawing
// never costs more than the work. Anywhere else (a log file, a pipe, CI) it
// writes nothing in place and instead logs Caffe's own line,
// "Processed N files.", every thousand items, so logs read like Caffe's and
// the tools that parse Caffe logs keep working.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configure a Reporter.
type Options struct {
	// Label starts the terminal status line, e.g. "convert_mnist_data".
	Label string
	// Unit names the items on the status line, e.g. "images".
	Unit string
	// Total is the number of items expected; 0 when unknown, in which case
	// no percentage or time left is shown.
	Total int
	// Terminal selects the in-place status line on Out; otherwise Logf gets
	// "Processed N files." every LogEvery items.
	Terminal bool
	// Out receives the status line (normally standard error).
	Out io.Writer
	// Logf writes a log line (normally glog.Infof).
	Logf func(format string, args ...any)
	// LogEvery is how many items pass between log lines when not on a
	// terminal; 0 means 1000, Caffe's interval.
	LogEvery int
	// Interval is the least time between redraws of the status line; 0
	// means 250ms.
	Interval time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Reporter counts finished items and reports them. Its methods may be
// called from several goroutines.
type Reporter struct {
	o Options

	mu       sync.Mutex
	done     int
	start    time.Time
	lastDraw time.Time
	drawn    bool // a status line is on the screen and must be cleared before other output
	finished bool
}

// New starts a reporter; the clock for the rate starts now.
func New(o Options) *Reporter {
	if o.LogEvery <= 0 {
		o.LogEvery = 1000
	}
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Unit == "" {
		o.Unit = "items"
	}
	// The first line waits one interval like the others: a rate measured
	// over the first few items says nothing.
	start := o.Now()
	return &Reporter{o: o, start: start, lastDraw: start}
}

// IsTerminal reports whether w is a character device such as a terminal,
// where an in-place status line makes sense (a file, a pipe or a buffer is
// not).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Add records n more finished items.
func (r *Reporter) Add(n int) {
	r.mu.Lock()
	prev := r.done
	r.done += n
	if r.o.Terminal {
		if now := r.o.Now(); now.Sub(r.lastDraw) >= r.o.Interval {
			r.draw(now)
		}
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	// One line per multiple of LogEvery crossed, as Caffe's loops log when
	// ++count % 1000 == 0. Logf runs without the lock: it may write through
	// this reporter's Writer.
	for k := prev/r.o.LogEvery + 1; k <= (prev+n)/r.o.LogEvery; k++ {
		r.o.Logf("Processed %d files.", k*r.o.LogEvery)
	}
}

// Done returns the number of items recorded so far.
func (r *Reporter) Done() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Finish clears the status line and logs the final count, as Caffe logs
// "Processed N files." after its loop when the count was not just logged.
// After Finish or Stop it does nothing.
func (r *Reporter) Finish() {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.finished = true
	r.clear()
	done, log := r.done, r.o.Terminal || r.done%r.o.LogEvery != 0 || r.done == 0
	r.mu.Unlock()
	if log {
		r.o.Logf("Processed %d files.", done)
	}
}

// Stop clears the status line without logging, for a conversion that
// failed; after Finish or Stop it does nothing.
func (r *Reporter) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = true
	r.clear()
}

// Writer wraps w, the destination of log lines written while the reporter
// runs, so that a log line first clears the status line and the status line
// is redrawn below it, instead of the two being mixed on one line.
func (r *Reporter) Writer(w io.Writer) io.Writer { return &logWriter{r: r, w: w} }

type logWriter struct {
	r *Reporter
	w io.Writer
}

func (l *logWriter) Write(p []byte) (int, error) {
	r := l.r
	r.mu.Lock()
	defer r.mu.Unlock()
	redraw := r.drawn
	r.clear()
	n, err := l.w.Write(p)
	if redraw && !r.finished {
		r.draw(r.o.Now())
	}
	return n, err
}

// Line returns the status line for the current count (without the
// carriage return and erase sequence).
func (r *Reporter) Line() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.line(r.o.Now())
}

func (r *Reporter) line(now time.Time) string {
	var b strings.Builder
	if r.o.Label != "" {
		b.WriteString(r.o.Label)
		b.WriteString(": ")
	}
	if r.o.Total > 0 {
		fmt.Fprintf(&b, "%d/%d %s (%.0f%%)", r.done, r.o.Total, r.o.Unit, 100*float64(r.done)/float64(r.o.Total))
	} else {
		fmt.Fprintf(&b, "%d %s", r.done, r.o.Unit)
	}
	elapsed := now.Sub(r.start)
	if elapsed <= 0 || r.done == 0 {
		return b.String()
	}
	rate := float64(r.done) / elapsed.Seconds()
	fmt.Fprintf(&b, ", %s %s/s", formatRate(rate), r.o.Unit)
	if r.o.Total > 0 && r.done < r.o.Total {
		left := time.Duration(float64(r.o.Total-r.done) / rate * float64(time.Second))
		fmt.Fprintf(&b, ", %s left", formatDuration(left))
	}
	return b.String()
}

// draw writes the status line over the current terminal line; the caller
// holds r.mu.
func (r *Reporter) draw(now time.Time) {
	// \r returns to the line's start and ESC[K erases what a longer
	// previous line left behind.
	fmt.Fprintf(r.o.Out, "\r%s\x1b[K", r.line(now))
	r.drawn = true
	r.lastDraw = now
}

// clear erases the status line if one is shown; the caller holds r.mu.
func (r *Reporter) clear() {
	if r.drawn {
		io.WriteString(r.o.Out, "\r\x1b[K")
		r.drawn = false
	}
}

func formatRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// formatDuration rounds to whole seconds (tenths under ten seconds), which
// is all an estimate deserves.
func formatDuration(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
