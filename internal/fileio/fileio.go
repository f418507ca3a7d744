// Package fileio reads the files a user names (images, nets, solvers,
// weights, solver states, HDF5 files) with the checks every such read
// needs: the path must be a regular file, and a file larger than the
// caller's limit is refused before anything is allocated. A FIFO, a device
// such as /dev/zero or a directory given where a file was expected would
// otherwise hang the reader or exhaust memory.
package fileio

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// ProtoLimit is the largest protobuf file gocaffe reads: protobuf's own
// limit on a message (2 GiB - 1), which is also Caffe's
// kProtoReadBytesLimit. Nothing larger can be a valid net, solver,
// caffemodel or solverstate.
const ProtoLimit = 1<<31 - 1

// NoLimit lets ReadFile read a regular file of any size.
const NoLimit = -1

// Open opens path for reading after checking, on the open file, that it is
// a regular file of at most limit bytes (NoLimit for any size). It opens
// with O_NONBLOCK so that a FIFO is refused instead of blocking the open.
// The returned size is the file's size at the check.
func Open(path string, limit int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file (%s)", path, describeMode(info.Mode()))
	}
	if limit >= 0 && info.Size() > limit {
		f.Close()
		return nil, 0, fmt.Errorf("%s is %d bytes, more than the %d bytes allowed for it", path, info.Size(), limit)
	}
	return f, info.Size(), nil
}

// ReadFile reads the regular file at path whole, refusing anything that
// Open refuses. It reads at most the size the check saw, plus one byte to
// notice a file that grew past limit meanwhile.
func ReadFile(path string, limit int64) ([]byte, error) {
	return ReadFileInto(nil, path, limit)
}

// ReadFileInto is ReadFile reusing buf's memory when it is large enough.
func ReadFileInto(buf []byte, path string, limit int64) ([]byte, error) {
	f, size, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+1)
	}
	buf = buf[:size+1]
	n, err := io.ReadFull(f, buf)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return buf[:n], nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	// The file grew after the check: read on, still within limit.
	rest, err := io.ReadAll(limitReader(f, limit, size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	buf = append(buf, rest...)
	if limit >= 0 && int64(len(buf)) > limit {
		return nil, fmt.Errorf("%s grew past the %d bytes allowed for it while being read", path, limit)
	}
	return buf, nil
}

func limitReader(r io.Reader, limit, done int64) io.Reader {
	if limit < 0 {
		return r
	}
	return io.LimitReader(r, limit-done+1)
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}
