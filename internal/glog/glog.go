// Package glog writes log lines in the format of Google's glog, which Caffe
// uses:
//
//	I1122 17:05:01.123456  4242 solver.go:42] Iteration 100, loss = 0.3
//
// Tools that parse Caffe logs (Caffe's own parse_log.py and
// extract_seconds.py among them) read the level letter, the date and time,
// and the message after "] ", so the gocaffe command's logs keep that
// shape. It is the command's formatter: Handler is a slog.Handler that the
// command hands to the library as its logger (Logger), and Infof, Warningf
// and Errorf log the command's own lines through the same handler.
//
// Every level is written: slog's Debug and Info as glog's I (the library
// logs the details of building nets at Debug; Caffe logs them at INFO),
// Warn as W and Error as E.
package glog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

var (
	mu  sync.Mutex
	out io.Writer = os.Stderr
	pid           = os.Getpid()
)

// SetOutput sends the log lines of Logger, Infof, Warningf and Errorf to w
// (standard error by default) and returns the previous writer.
func SetOutput(w io.Writer) io.Writer {
	mu.Lock()
	defer mu.Unlock()
	prev := out
	out = w
	return prev
}

// Handler is a slog.Handler that writes glog lines: the level letter, the
// time, the process id, the file and line of the record's program counter,
// and the message. Attributes, which the library's lines do not have,
// follow the message as key=value.
type Handler struct {
	w     io.Writer // nil: the package's output (SetOutput)
	attrs string    // preformatted " key=value" of WithAttrs
	group string    // the WithGroup prefix of keys, "g." for group g
}

// NewHandler returns a Handler writing to w; a nil w writes to the
// package's output, which SetOutput chooses.
func NewHandler(w io.Writer) *Handler { return &Handler{w: w} }

// Logger returns a logger writing glog lines to the package's output: the
// logger the command gives nets and solvers.
func Logger() *slog.Logger { return slog.New(NewHandler(nil)) }

// Enabled reports true: glog lines are written at every level.
func (h *Handler) Enabled(context.Context, slog.Level) bool { return true }

// Handle writes r as one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	return h.write(letter(r.Level), r.Time, r.PC, b.String())
}

// WithAttrs returns a handler that adds attrs to every line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	h2 := *h
	h2.attrs = b.String()
	return &h2
}

// WithGroup returns a handler that qualifies later attributes' keys by
// name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group += name + "."
	return &h2
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, sub := range a.Value.Group() {
			appendAttr(b, g, sub)
		}
		return
	}
	fmt.Fprintf(b, " %s%s=%v", group, a.Key, a.Value)
}

// letter is glog's letter of a level.
func letter(l slog.Level) byte {
	switch {
	case l < slog.LevelWarn:
		return 'I'
	case l < slog.LevelError:
		return 'W'
	}
	return 'E'
}

// write writes one line in glog's format for the code at pc.
func (h *Handler) write(level byte, now time.Time, pc uintptr, msg string) error {
	if now.IsZero() {
		now = time.Now()
	}
	file, line := "???", 0
	if pc != 0 {
		f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		if f.File != "" {
			file, line = f.File, f.Line
		}
	}
	mu.Lock()
	defer mu.Unlock()
	w := h.w
	if w == nil {
		w = out
	}
	_, err := fmt.Fprintf(w, "%c%02d%02d %02d:%02d:%02d.%06d %6d %s:%d] %s\n",
		level, int(now.Month()), now.Day(), now.Hour(), now.Minute(), now.Second(), now.Nanosecond()/1000,
		pid, filepath.Base(file), line, msg)
	return err
}

// logf writes one line at level ('I', 'W', 'E') for the caller of Infof,
// Warningf or Errorf.
func logf(level byte, format string, args []any) {
	now := time.Now()
	var pc [1]uintptr
	runtime.Callers(3, pc[:]) // runtime.Callers, logf, Infof: the caller of Infof
	var h Handler             // the package's output
	h.write(level, now, pc[0], fmt.Sprintf(format, args...))
}

// Infof logs at level INFO.
func Infof(format string, args ...any) { logf('I', format, args) }

// Warningf logs at level WARNING.
func Warningf(format string, args ...any) { logf('W', format, args) }

// Errorf logs at level ERROR.
func Errorf(format string, args ...any) { logf('E', format, args) }
