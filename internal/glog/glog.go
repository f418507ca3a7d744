// Package glog writes log lines in the format of Google's glog, which Caffe
// uses:
//
//	I1122 17:05:01.123456  4242 solver.go:42] Iteration 100, loss = 0.3
//
// Tools that parse Caffe logs (Caffe's own parse_log.py and
// extract_seconds.py among them) read the level letter, the date and time,
// and the message after "] ", so gocaffe's logs keep that shape.
package glog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

var (
	mu  sync.Mutex
	out io.Writer = os.Stderr
	pid           = os.Getpid()
)

// SetOutput sends log lines to w (standard error by default) and returns
// the previous writer.
func SetOutput(w io.Writer) io.Writer {
	mu.Lock()
	defer mu.Unlock()
	prev := out
	out = w
	return prev
}

// logf writes one line at level ('I', 'W', 'E') for the caller depth frames
// up.
func logf(level byte, depth int, format string, args []any) {
	now := time.Now()
	_, file, line, ok := runtime.Caller(depth + 1)
	if !ok {
		file, line = "???", 0
	}
	msg := fmt.Sprintf(format, args...)
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "%c%02d%02d %02d:%02d:%02d.%06d %6d %s:%d] %s\n",
		level, int(now.Month()), now.Day(), now.Hour(), now.Minute(), now.Second(), now.Nanosecond()/1000,
		pid, filepath.Base(file), line, msg)
}

// Infof logs at level INFO.
func Infof(format string, args ...any) { logf('I', 1, format, args) }

// Warningf logs at level WARNING.
func Warningf(format string, args ...any) { logf('W', 1, format, args) }

// Errorf logs at level ERROR.
func Errorf(format string, args ...any) { logf('E', 1, format, args) }
