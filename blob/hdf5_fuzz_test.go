package blob

import (
	"bytes"
	"testing"

	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/internal/h5pytest"
)

// fuzzMaxCount bounds the datasets the HDF5 fuzz target loads: a dataset
// of a billion elements is a valid request for 4 GB, which the hardening
// tests check under a memory limit, not a bug for a fuzz worker to find.
const fuzzMaxCount = 1 << 16

// FuzzHDF5Data reads whatever the fuzzer writes as the HDF5Data layer
// reads its files: every dataset of every group (a few levels deep) into
// a blob of its shape (FromHDF5 with reshape), strings as strings. Errors
// are fine; panics and allocations beyond the file's size are not.
func FuzzHDF5Data(f *testing.F) {
	for _, b := range h5pytest.Seeds(f) {
		f.Add(b)
	}
	f.Add(badinput.HDF5LinkNameBomb())
	f.Add(badinput.HDF5(
		badinput.H5Dataset{Path: "data", Shape: []uint64{2, 3}, Stored: make([]byte, 24)},
		badinput.H5Dataset{Path: "g/compact", Shape: []uint64{3}, Compact: make([]byte, 12)},
		badinput.H5Dataset{Path: "g/deflated", Shape: []uint64{4, 4}, Deflated: badinput.DeflateBomb(1 << 20)},
		badinput.H5Dataset{Path: "g/never", Shape: []uint64{5}}))
	w := hdf5.NewBuilder()
	createFuzzSeed(f, w.Root())
	f.Add(w.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := hdf5.NewReader(bytes.NewReader(b), "fuzz.h5")
		if err != nil {
			return
		}
		root, err := file.Root()
		if err != nil {
			return
		}
		loadGroup(root, 0)
	})
}

// createFuzzSeed adds a float dataset and a group with an int32 one.
func createFuzzSeed(t testing.TB, g *hdf5.WGroup) {
	t.Helper()
	if err := hdf5.CreateFloats(g, "data", []int{2, 2}, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	sub, err := g.CreateGroup("g")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.CreateInt32s("label", []int{2}, []int32{0, 1}); err != nil {
		t.Fatal(err)
	}
	if err := sub.CreateString("s", "x"); err != nil {
		t.Fatal(err)
	}
}

// loadGroup loads every member of g as FuzzHDF5Data says.
func loadGroup(g *hdf5.Group, depth int) {
	names := g.Names()
	if depth > 4 || len(names) > 64 {
		return
	}
	for _, name := range names {
		if g.IsGroup(name) {
			if sub, err := g.Group(name); err == nil {
				loadGroup(sub, depth+1)
			}
			continue
		}
		d, err := g.Dataset(name)
		if err != nil || d.Count() > fuzzMaxCount || d.ElementSize() > fuzzMaxCount {
			continue
		}
		if d.Class() == hdf5.String {
			d.ReadString()
			continue
		}
		b, _ := New[float32]()
		b.FromHDF5(d, true)
	}
}
