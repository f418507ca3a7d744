package hdf5_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/badinput"
)

// Sizes written in a file are checked against what the file holds before
// anything is allocated for them. Each case ran the process out of memory
// (or panicked) before; they run under an address-space limit so that a
// regression fails quickly instead of taking the machine's memory.
func TestSizesInTheFileAreBounded(t *testing.T) {
	if !badinput.UnderMemoryLimit(t) {
		return
	}
	dir := t.TempDir()
	open := func(name string, b []byte) *hdf5.File {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := hdf5.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	wantErr := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", what, err, w)
			}
		}
	}

	// A link name of 2^62 bytes: makeslice panicked.
	f := open("link.h5", badinput.HDF5LinkNameBomb())
	_, err := f.OpenDataset("data")
	wantErr("link name", err, "link.h5", "link name of 4611686018427387904 bytes")

	// Compact storage of 16 bytes for a dataspace of 4 GiB.
	f = open("compact.h5", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1 << 30}, Compact: make([]byte, 16)}))
	d, err := f.OpenDataset("data")
	if err != nil {
		t.Fatal(err)
	}
	wantErr("compact", d.CheckStorage(), "compact.h5", "dataset /data", "compact data of 16 bytes", "need 4294967296")

	// 2^31-1 rows of which the file holds 4242.
	f = open("rows.h5", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1<<31 - 1, 1}, Stored: make([]byte, 4*4242)}))
	if d, err = f.OpenDataset("data"); err != nil {
		t.Fatal(err)
	}
	wantErr("rows", d.CheckStorage(), "rows.h5", "dataset /data", "run past the end of the file")
	wantErr("rows, read", hdf5.ReadFloats(d, make([]float32, 0)), "rows.h5", "dataset /data")

	// A never-written dataset is valid, and costs no read buffer.
	f = open("never.h5", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1e9}}))
	if d, err = f.OpenDataset("data"); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckStorage(); err != nil {
		t.Errorf("never written: %v", err)
	}
}

// A deflated chunk of 3 MB that inflates to 3 GiB for a dataset of 400
// bytes is refused once it passes the chunk's size.
func TestDeflateBombChunk(t *testing.T) {
	if !badinput.UnderMemoryLimit(t) {
		return
	}
	b := badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{10, 10}, Deflated: badinput.DeflateBomb(3 << 30)})
	f, err := hdf5.NewReader(bytes.NewReader(b), "bomb.h5")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.OpenDataset("data")
	if err != nil {
		t.Fatal(err)
	}
	err = hdf5.ReadFloats(d, make([]float32, 100))
	if err == nil || !strings.Contains(err.Error(), "bomb.h5: dataset /data: chunk at [0 0]") || !strings.Contains(err.Error(), "inflates to more than the 404 bytes") {
		t.Errorf("got %v", err)
	}
}

// A chunk B-tree whose entries all name one child is a DAG that a walk
// would follow once per path; it is refused.
func TestBTreeSharingAChildIsAnError(t *testing.T) {
	chunk := badinput.DeflateBomb(1 << 20)
	b := badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{512, 512}, Deflated: chunk})
	node := bytes.Index(b, []byte("TREE"))
	const keySize = 8 + 8*3
	entry := b[node+24 : node+24+keySize+8]
	binary.LittleEndian.PutUint16(b[node+6:], 2) // two entries, the second a copy
	copy(b[node+24+keySize+8:], entry)
	f, err := hdf5.NewReader(bytes.NewReader(b), "dag.h5")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.OpenDataset("data")
	if err != nil {
		t.Fatal(err)
	}
	err = hdf5.ReadFloats(d, make([]float32, d.Count()))
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("got %v", err)
	}
}
