package badinput

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/hdf5"
)

func TestPNGBombIsValid(t *testing.T) {
	t0 := time.Now()
	b := PNGBomb(20000, 20000)
	t.Logf("%d bytes in %v", len(b), time.Since(t0))
	small := PNGBomb(7, 5)
	img, err := png.Decode(bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 7 || img.Bounds().Dy() != 5 {
		t.Fatal(img.Bounds())
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != 20000 {
		t.Fatal(cfg, err)
	}
}

// The crafted HDF5 files are valid where they do not lie: libhdf5 (h5dump)
// and our reader read their honest datasets.
func TestHDF5IsValid(t *testing.T) {
	data := make([]byte, 4*6)
	for i := range 6 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	b := HDF5(H5Dataset{Path: "data", Shape: []uint64{2, 3}, Stored: data},
		H5Dataset{Path: "g/h/c", Shape: []uint64{3}, Compact: data[:12]},
		H5Dataset{Path: "g/z", Shape: []uint64{4, 4}, Deflated: zlibOf(make([]byte, 64))},
		H5Dataset{Path: "g/never", Shape: []uint64{5}})
	f, err := hdf5.NewReader(bytes.NewReader(b), "crafted.h5")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]float32{"data": {0, 1, 2, 3, 4, 5}, "g/h/c": {0, 1, 2}, "g/z": make([]float32, 16), "g/never": make([]float32, 5)} {
		d, err := f.OpenDataset(path)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, d.Count())
		if err := hdf5.ReadFloats(d, got); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", path, got, err, want)
		}
	}
	h5dump, err := exec.LookPath("h5dump")
	if err != nil {
		t.Skip("no h5dump (Debian: hdf5-tools) to check the file with libhdf5")
	}
	path := filepath.Join(t.TempDir(), "crafted.h5")
	os.WriteFile(path, b, 0o644)
	out, err := exec.Command(h5dump, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(1,0): 3, 4, 5") {
		t.Errorf("h5dump: %v\n%s", err, out)
	}
}

func zlibOf(b []byte) []byte {
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestDeflateBomb(t *testing.T) {
	r, err := zlib.NewReader(bytes.NewReader(DeflateBomb(5 << 20)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	if n != 5<<20 || err != nil {
		t.Errorf("inflates to %d bytes, %v; want 5 MiB", n, err)
	}
	if b := DeflateBomb(3 << 30); len(b) > 4<<20 {
		t.Errorf("3 GiB deflate to %d bytes", len(b))
	}
}
