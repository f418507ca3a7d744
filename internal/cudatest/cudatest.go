// Package cudatest holds helpers for tests that run on a GPU. Such tests
// compile in every build; in a build without the `cuda` tag they skip (at
// their first call to Device), and with the tag they run on a machine with
// a device, where not finding one is a failure, not a skip.
package cudatest

import (
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
)

// Device returns device 0. It skips the test in a build without the
// `cuda` tag and fails it when the build has CUDA but no device is found.
func Device(t testing.TB) *cuda.Device {
	t.Helper()
	if !cuda.Available() {
		t.Skip("built without CUDA (go test -tags cuda runs this test on a GPU machine)")
	}
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
