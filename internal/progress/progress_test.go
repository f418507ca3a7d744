package progress

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

type logLines []string

func (l *logLines) logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

func TestLogsEveryThousandWhenNotATerminal(t *testing.T) {
	var logs logLines
	var out bytes.Buffer
	r := New(Options{Out: &out, Logf: logs.logf, Total: 2500})
	for range 999 {
		r.Add(1)
	}
	if len(logs) != 0 {
		t.Fatalf("logged before 1000 items: %q", logs)
	}
	r.Add(1)
	r.Add(1500) // crosses 2000 once
	r.Finish()
	want := logLines{"Processed 1000 files.", "Processed 2000 files.", "Processed 2500 files."}
	if strings.Join(logs, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q", logs, want)
	}
	if out.Len() != 0 {
		t.Errorf("wrote a status line off a terminal: %q", out.String())
	}
}

func TestFinishDoesNotRepeatTheLastLine(t *testing.T) {
	var logs logLines
	r := New(Options{Logf: logs.logf})
	r.Add(2000)
	r.Finish()
	r.Finish()
	if len(logs) != 2 || logs[1] != "Processed 2000 files." {
		t.Errorf("logs %q, want 1000 and 2000 once each", logs)
	}
	// Caffe logs a final count when it is not a multiple of the interval.
	logs = nil
	r = New(Options{Logf: logs.logf, LogEvery: 10})
	r.Add(25)
	r.Finish()
	if strings.Join(logs, "|") != "Processed 10 files.|Processed 20 files.|Processed 25 files." {
		t.Errorf("logs %q", logs)
	}
}

func TestStopLogsNothing(t *testing.T) {
	var logs logLines
	r := New(Options{Logf: logs.logf})
	r.Add(5)
	r.Stop()
	r.Finish()
	if len(logs) != 0 {
		t.Errorf("logs %q after Stop", logs)
	}
}

func TestTerminalLineIsThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var out bytes.Buffer
	var logs logLines
	r := New(Options{Label: "convert", Unit: "images", Total: 100, Terminal: true, Out: &out, Logf: logs.logf, Now: clock.now})
	r.Add(5)
	if out.Len() != 0 {
		t.Fatalf("drew before the first interval: %q", out.String())
	}
	clock.advance(time.Second)
	r.Add(5)
	draws := strings.Count(out.String(), "\r")
	if draws != 1 {
		t.Fatalf("%d draws after the first item, want 1: %q", draws, out.String())
	}
	for range 20 {
		clock.advance(10 * time.Millisecond)
		r.Add(1)
	}
	// 200ms passed since the draw: under the 250ms interval.
	if n := strings.Count(out.String(), "\r"); n != 1 {
		t.Errorf("%d draws within the interval, want 1", n)
	}
	clock.advance(50 * time.Millisecond)
	r.Add(1)
	if n := strings.Count(out.String(), "\r"); n != 2 {
		t.Errorf("%d draws after the interval, want 2", n)
	}
	if len(logs) != 0 {
		t.Errorf("logged %q on a terminal before Finish", logs)
	}
	r.Finish()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("Finish did not clear the line: %q", out.String())
	}
	if len(logs) != 1 || logs[0] != "Processed 31 files." {
		t.Errorf("final log %q", logs)
	}
}

func TestLineShowsRateAndTimeLeft(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := New(Options{Label: "convert_mnist_data", Unit: "images", Total: 60000, Now: clock.now})
	if got := r.Line(); got != "convert_mnist_data: 0/60000 images (0%)" {
		t.Errorf("at start: %q", got)
	}
	clock.advance(2 * time.Second)
	r.Add(15000)
	// 7500 images/s; 45000 left take 6s.
	if got, want := r.Line(), "convert_mnist_data: 15000/60000 images (25%), 7500 images/s, 6s left"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	clock.advance(2 * time.Minute)
	// 15000 in 122s: 123 images/s, 45000 left take 6m6s.
	if got, want := r.Line(), "convert_mnist_data: 15000/60000 images (25%), 123 images/s, 6m6s left"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// Without a total: count and rate only.
	u := New(Options{Unit: "images", Now: clock.now})
	clock.advance(4 * time.Second)
	u.Add(10)
	if got, want := u.Line(), "10 images, 2.50 images/s"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

func TestWriterKeepsLogLinesOffTheStatusLine(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var out bytes.Buffer
	r := New(Options{Unit: "images", Total: 10, Terminal: true, Out: &out, Now: clock.now})
	logw := r.Writer(&out)
	clock.advance(time.Second)
	r.Add(1)
	out.Reset()
	fmt.Fprintf(logw, "W log line\n")
	got := out.String()
	// Clear, the log line, then the status line drawn again below it.
	if !strings.HasPrefix(got, "\r\x1b[KW log line\n\r1/10 images (10%)") {
		t.Errorf("log through the writer: %q", got)
	}
	// Before anything is drawn, and after Finish, it passes lines through.
	r.Finish()
	out.Reset()
	fmt.Fprintf(logw, "after\n")
	if out.String() != "after\n" {
		t.Errorf("after Finish: %q", out.String())
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}
