// Package h5pytest runs h5py (libhdf5's Python binding) from tests, to
// write HDF5 files our reader must read and to read those we write. Tests
// using it skip when no Python 3 with h5py is installed (Debian:
// python3-h5py).
package h5pytest

import (
	"os/exec"
	"testing"
)

// Python returns a Python 3 interpreter that has h5py, or skips the test.
func Python(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import h5py").Run() == nil {
			return path
		}
	}
	t.Skip("needs Python 3 with h5py (Debian: python3-h5py)")
	return ""
}

// Run runs a Python script in dir, failing the test on error, and returns
// its output.
func Run(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command(Python(t), "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}
