package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(good, 5)
	if err != nil || string(b) != "hello" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if b, err := ReadFile(empty, 0); err != nil || len(b) != 0 {
		t.Fatalf("empty file: %q, %v", b, err)
	}
	buf := make([]byte, 0, 64)
	if b, err := ReadFileInto(buf, good, NoLimit); err != nil || string(b) != "hello" || &b[0] != &buf[:1][0] {
		t.Fatalf("ReadFileInto did not reuse the buffer: %q, %v", b, err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		limit      int64
		want       string
	}{
		{"too large", good, 4, "5 bytes, more than the 4"},
		{"directory", dir, NoLimit, "a directory"},
		{"device", "/dev/zero", NoLimit, "a character device"},
		{"fifo", fifo, NoLimit, "a named pipe"},
		{"missing", filepath.Join(dir, "nope"), NoLimit, "no such file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, c.limit); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile hangs", c.name)
		}
	}
}
