package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gocaffe/gocaffe/internal/glog"
)

const (
	// followChunk is what one read takes of the log: the dashboard's lock
	// is held for one chunk's lines at a time.
	followChunk = 1 << 20
	// maxReadPerPoll bounds one poll's reading, so that a huge log is
	// taken in steps (the page shows it growing) and a newer log is seen
	// between them.
	maxReadPerPoll = 64 << 20
	// headLen is how much of the log's beginning is kept to recognise it:
	// a file truncated and written again past the point read (copytruncate
	// rotation) begins differently, glog's first line being dated.
	headLen = 256
)

// logFollower reads the newest log of a directory into a dashboard as it
// grows (`gocaffe ui`): at each poll only what was appended since the
// last, from where that stopped; from the beginning again when the newest
// log is another file (a newer run, or the name rotated to a new file) or
// this one was truncated. Memory stays bounded whatever the file: the
// dashboard bounds its rows and a line's length.
type logFollower struct {
	dir        string
	d          *dashboard
	maxPerPoll int64 // maxReadPerPoll but in tests

	path   string      // the log followed
	info   os.FileInfo // its identity (os.SameFile)
	offset int64       // how much of it is read
	head   []byte      // its first headLen bytes, as far as read
	buf    []byte
	read   int64 // bytes read in all, for the tests
}

func newLogFollower(dir string, d *dashboard) *logFollower {
	return &logFollower{dir: dir, d: d, maxPerPoll: maxReadPerPoll, buf: make([]byte, followChunk)}
}

// follow polls every second until stop is closed (nil: for ever), at once
// again while a poll stops short of the end, and puts a poll's error on
// the page (and in the log when it changes).
func (f *logFollower) follow(stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	said := ""
	for {
		more, err := f.poll()
		problem := ""
		if err != nil {
			problem = err.Error()
		}
		f.d.setProblem(problem)
		if problem != said && problem != "" {
			glog.Warningf("dashboard: %s", problem)
		}
		said = problem
		if more {
			select {
			case <-stop:
				return
			default:
				continue
			}
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// poll reads what the newest log holds beyond what was read, at most
// maxPerPoll bytes; more says it stopped short of the end.
func (f *logFollower) poll() (more bool, err error) {
	path, err := newestLog(f.dir)
	if err != nil {
		return false, err
	}
	file, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return false, err
	}
	if !f.same(path, info, file) {
		f.begin(path, info)
	}
	return f.readOn(file)
}

// same says whether file (at path) is the log followed, as far as read:
// the same file, not shorter, beginning with the same bytes.
func (f *logFollower) same(path string, info os.FileInfo, file *os.File) bool {
	if path != f.path || f.info == nil || !os.SameFile(info, f.info) || info.Size() < f.offset {
		return false
	}
	head := make([]byte, len(f.head))
	n, _ := file.ReadAt(head, 0)
	return bytes.Equal(head[:n], f.head)
}

// begin follows a log from its beginning.
func (f *logFollower) begin(path string, info os.FileInfo) {
	f.path, f.info, f.offset, f.head = path, info, 0, f.head[:0]
	f.d.restart(filepath.Base(path), info.ModTime().Year())
}

// readOn reads file from the offset to its end, or maxPerPoll bytes.
func (f *logFollower) readOn(file *os.File) (more bool, err error) {
	for budget := f.maxPerPoll; budget > 0; {
		n, err := file.ReadAt(f.buf[:min(int64(len(f.buf)), budget)], f.offset)
		if n > 0 {
			got := f.buf[:n]
			if len(f.head) < headLen {
				f.head = append(f.head, got[:min(n, headLen-len(f.head))]...)
			}
			f.d.Write(got)
			f.offset += int64(n)
			f.read += int64(n)
			budget -= int64(n)
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return true, nil
}

// newestLog is the regular file of dir modified last.
func newestLog(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var newest string
	var when time.Time
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if info.ModTime().After(when) {
			newest, when = filepath.Join(dir, e.Name()), info.ModTime()
		}
	}
	if newest == "" {
		return "", fmt.Errorf("no log file in %s", dir)
	}
	return newest, nil
}
