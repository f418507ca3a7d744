//go:build cuda

// Package cudatest holds helpers for tests that run on a GPU (built with
// the `cuda` tag). Those tests run on a machine with a device; not finding
// one there is a failure, not a skip.
package cudatest

import (
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
)

// Device returns device 0 or fails the test.
func Device(t testing.TB) *cuda.Device {
	t.Helper()
	d, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatalf("no CUDA device: %v", err)
	}
	return d
}

// Upload copies host bytes into a new device buffer freed when the test
// ends.
func Upload(t testing.TB, d *cuda.Device, b []byte) cuda.DevicePtr {
	t.Helper()
	p := Alloc(t, d, len(b))
	if err := d.CopyHtoD(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

// Alloc allocates n device bytes freed when the test ends.
func Alloc(t testing.TB, d *cuda.Device, n int) cuda.DevicePtr {
	t.Helper()
	p, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(p) })
	return p
}

// Download copies n device bytes to the host.
func Download(t testing.TB, d *cuda.Device, p cuda.DevicePtr, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := d.CopyDtoH(b, p); err != nil {
		t.Fatal(err)
	}
	return b
}
