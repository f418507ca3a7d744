// Package logtest holds a slog.Handler that records what the library logs,
// for the tests of the packages that log.
package logtest

import (
	"context"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Line is one logged record.
type Line struct {
	Level   slog.Level
	Message string
	File    string // the base name of the file that logged it
}

// Recorder is a slog.Handler that keeps every record, at every level. It
// is safe for concurrent use (data layers log from their prefetch
// goroutines).
type Recorder struct {
	mu    sync.Mutex
	lines []Line
}

// Logger returns a logger recording into r.
func (r *Recorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled reports true: every level is recorded.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	file := ""
	if rec.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{rec.PC}).Next()
		file = filepath.Base(f.File)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, Line{rec.Level, rec.Message, file})
	return nil
}

// WithAttrs returns r: the library's lines have no attributes.
func (r *Recorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup returns r.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Lines returns the records so far.
func (r *Recorder) Lines() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Line(nil), r.lines...)
}

// CaptureDefault makes slog.Default() record into a new Recorder until the
// test ends.
func CaptureDefault(t testing.TB) *Recorder {
	r := &Recorder{}
	prev := slog.Default()
	slog.SetDefault(r.Logger())
	t.Cleanup(func() { slog.SetDefault(prev) })
	return r
}

// Expect fails the test unless, for each line of want, r has a line with
// its message, at its level, from its file.
func (r *Recorder) Expect(t testing.TB, want ...Line) {
	t.Helper()
	for _, w := range want {
		if got, ok := r.Find(w.Message); !ok || got != w {
			t.Errorf("logged %+v (found: %v), want %+v", got, ok, w)
		}
	}
}

// ExpectNone fails the test if r has any line; what says whose lines r
// would hold.
func (r *Recorder) ExpectNone(t testing.TB, what string) {
	t.Helper()
	if lines := r.Lines(); len(lines) > 0 {
		t.Errorf("%d lines went to %s, the first %+v; want none", len(lines), what, lines[0])
	}
}

// Find returns the first line whose message contains s, and whether there
// is one.
func (r *Recorder) Find(s string) (Line, bool) {
	for _, l := range r.Lines() {
		if strings.Contains(l.Message, s) {
			return l, true
		}
	}
	return Line{}, false
}
