// Package logf writes the library's log lines, printf-style, to a
// *slog.Logger: the logger of a net, solver or layer's options, or
// slog.Default() where none was given.
//
// The message is Caffe's own wording, formatted as Caffe's glog lines
// carry it ("Iteration 100, loss = 0.3"), with no attributes, so that a
// handler that writes the message alone (the command's glog format)
// reproduces Caffe's logs. Each record carries the program counter of the
// library function that logs, so handlers that show the source
// (slog.HandlerOptions.AddSource, the command's "solver.go:457]") name the
// library's line, not this package's.
//
// A line whose level the logger does not enable is neither formatted nor
// recorded.
package logf

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Levels: Caffe logs everything at INFO; gocaffe logs the chatter of
// building nets and solvers (every layer's shapes, which layers need a
// backward pass) at Debug, so that a program's default logger shows
// training's progress and warnings without it. The command shows both as
// Caffe's "I" lines.

// Debugf logs at slog.LevelDebug: the details of building a net or solver.
func Debugf(l *slog.Logger, format string, args ...any) { logAt(l, slog.LevelDebug, format, args) }

// Infof logs at slog.LevelInfo: training's progress and results.
func Infof(l *slog.Logger, format string, args ...any) { logAt(l, slog.LevelInfo, format, args) }

// Warnf logs at slog.LevelWarn.
func Warnf(l *slog.Logger, format string, args ...any) { logAt(l, slog.LevelWarn, format, args) }

// Errorf logs at slog.LevelError.
func Errorf(l *slog.Logger, format string, args ...any) { logAt(l, slog.LevelError, format, args) }

// OrDefault returns l, or slog.Default() when l is nil.
func OrDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// logAt logs for the caller of Debugf, Infof, Warnf or Errorf.
func logAt(l *slog.Logger, level slog.Level, format string, args []any) {
	l = OrDefault(l)
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return
	}
	var pc [1]uintptr
	runtime.Callers(3, pc[:]) // runtime.Callers, logAt, Infof: the caller of Infof
	r := slog.NewRecord(time.Now(), level, fmt.Sprintf(format, args...), pc[0])
	_ = l.Handler().Handle(ctx, r)
}
