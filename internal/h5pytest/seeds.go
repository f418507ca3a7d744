package h5pytest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Seeds returns the HDF5 files of seeds/ (written once by h5py with
// seeds/make.py, and kept so that the fuzz targets start from libhdf5's
// own structures on machines without h5py).
func Seeds(t testing.TB) [][]byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(here), "seeds", "*.h5"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no HDF5 seeds beside %s (%v)", here, err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
