package blob

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/internal/sysmem"
)

// A shape whose data the process cannot allocate is refused by Reshape,
// with the blob unchanged, instead of ending the process at first use.
func TestReshapeRefusesMemoryThatIsNotThere(t *testing.T) {
	if !badinput.UnderMemoryLimit(t) {
		return
	}
	b := mustNew[float32](t, 2, 3)
	err := b.Reshape([]int{2, 1024, 1024, 1023}) // 8 GiB
	var e *sysmem.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "blob: shape [2 1024 1024 1023] needs 8.0 GiB, but only") {
		t.Fatalf("got %v", err)
	}
	if b.ShapeString() != "2 3 (6)" {
		t.Errorf("shape after the refusal: %s", b.ShapeString())
	}
	b.MutableCPUData()[5] = 1 // still usable
}

// HDF5 datasets that promise more than the file holds, or more than the
// process can have, are refused before the blob is sized for them (the
// HDF5Data layer's path: FromHDF5 with reshape).
func TestFromHDF5RefusesHugeDatasets(t *testing.T) {
	if !badinput.UnderMemoryLimit(t) {
		return
	}
	for _, c := range []struct {
		name string
		ds   badinput.H5Dataset
		want string
	}{
		{"compact", badinput.H5Dataset{Path: "data", Shape: []uint64{1 << 30}, Compact: make([]byte, 16)}, "compact data of 16 bytes"},
		{"rows", badinput.H5Dataset{Path: "data", Shape: []uint64{1<<31 - 1, 1}, Stored: make([]byte, 4*4242)}, "run past the end of the file"},
		{"never written", badinput.H5Dataset{Path: "data", Shape: []uint64{1e9}}, "blob: shape [1000000000] needs 3.7 GiB, but only"},
	} {
		f, err := hdf5.NewReader(bytes.NewReader(badinput.HDF5(c.ds)), c.name+".h5")
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.OpenDataset("data")
		if err != nil {
			t.Fatal(err)
		}
		b := mustNew[float32](t)
		err = b.FromHDF5(d, true)
		if err == nil || !strings.Contains(err.Error(), c.name+".h5: dataset /data: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
}
