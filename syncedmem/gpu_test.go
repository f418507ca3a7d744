package syncedmem

import (
	"bytes"
	"testing"

	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// The GPU cases of Caffe's test_syncedmem, plus adoption, pinning and the
// async push.

func TestAllocationGPU(t *testing.T) {
	cudatest.Device(t)
	m := New(10)
	defer m.Close()
	p, err := m.GPUData()
	if err != nil || p == 0 {
		t.Fatalf("GPUData = %#x, %v", p, err)
	}
	if m.Head() != HeadAtGPU {
		t.Errorf("head %v, want HEAD_AT_GPU", m.Head())
	}
	if p2, err := m.MutableGPUData(); err != nil || p2 != p {
		t.Errorf("MutableGPUData = %#x, %v; want the same buffer", p2, err)
	}
	d := cudatest.Device(t)
	if got := cudatest.Download(t, d, p, 10); !allEqual(got, 0) {
		t.Errorf("first device allocation not zero filled: %v", got)
	}
}

func TestGPURead(t *testing.T) {
	d := cudatest.Device(t)
	m := New(10)
	defer m.Close()
	fill(m.MutableCPUData(), 1)
	p, err := m.GPUData()
	if err != nil {
		t.Fatal(err)
	}
	if m.Head() != Synced {
		t.Fatalf("after GPUData of CPU data: head %v, want SYNCED", m.Head())
	}
	if got := cudatest.Download(t, d, p, 10); !allEqual(got, 1) {
		t.Errorf("device copy %v, want all 1", got)
	}
	// Write again on the CPU and see the value reach the device.
	fill(m.MutableCPUData(), 2)
	if m.Head() != HeadAtCPU {
		t.Fatalf("head %v, want HEAD_AT_CPU", m.Head())
	}
	if p, err = m.GPUData(); err != nil {
		t.Fatal(err)
	}
	if m.Head() != Synced {
		t.Fatalf("head %v, want SYNCED", m.Head())
	}
	if got := cudatest.Download(t, d, p, 10); !allEqual(got, 2) {
		t.Errorf("device copy %v, want all 2", got)
	}
}

func TestGPUWrite(t *testing.T) {
	d := cudatest.Device(t)
	m := New(10)
	defer m.Close()
	p, err := m.MutableGPUData()
	if err != nil {
		t.Fatal(err)
	}
	if m.Head() != HeadAtGPU {
		t.Fatalf("head %v, want HEAD_AT_GPU", m.Head())
	}
	d.Memset(p, 1, 10)
	if got := m.CPUData(); !allEqual(got, 1) {
		t.Errorf("CPUData after a device write: %v", got)
	}
	if m.Head() != Synced {
		t.Fatalf("head %v, want SYNCED", m.Head())
	}
	if p, err = m.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	d.Memset(p, 2, 10)
	if m.Head() != HeadAtGPU {
		t.Fatalf("head %v, want HEAD_AT_GPU", m.Head())
	}
	if got := m.CPUData(); !allEqual(got, 2) {
		t.Errorf("CPUData after the second device write: %v", got)
	}
	if m.Head() != Synced {
		t.Errorf("head %v, want SYNCED", m.Head())
	}
}

func TestValuesSurviveCPUToGPUToCPU(t *testing.T) {
	cudatest.Device(t)
	m := New(1 << 16)
	defer m.Close()
	want := make([]byte, m.Size())
	for i := range want {
		want[i] = byte(i * 31)
	}
	copy(m.MutableCPUData(), want)
	if _, err := m.MutableGPUData(); err != nil { // HEAD_AT_GPU, host copy now stale
		t.Fatal(err)
	}
	if got := m.CPUData(); !bytes.Equal(got, want) {
		t.Error("bytes changed on the way CPU -> GPU -> CPU")
	}
}

func TestAsyncGPUPush(t *testing.T) {
	d := cudatest.Device(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := New(1 << 20)
	m.SetDevice(d)
	defer m.Close()
	data := m.MutableCPUData()
	if !m.Pinned() {
		t.Error("host memory of a GPU-mode memory is not pinned")
	}
	for i := range data {
		data[i] = byte(i % 251)
	}
	if err := m.AsyncGPUPush(s); err != nil {
		t.Fatal(err)
	}
	if m.Head() != Synced {
		t.Errorf("after AsyncGPUPush: head %v, want SYNCED", m.Head())
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	p, _ := m.GPUData()
	if got := cudatest.Download(t, d, p, m.Size()); !bytes.Equal(got, data) {
		t.Error("async push delivered different bytes")
	}
	if err := m.AsyncGPUPush(s); err == nil {
		t.Error("AsyncGPUPush from SYNCED succeeded; Caffe requires HEAD_AT_CPU")
	}
}

func TestHostMemoryNotPinnedWithoutDevice(t *testing.T) {
	m := New(64)
	m.CPUData()
	if m.Pinned() {
		t.Error("host memory of a CPU-mode memory is pinned")
	}
}

func TestSetGPUDataAdoptsWithoutOwning(t *testing.T) {
	d := cudatest.Device(t)
	p := cudatest.Upload(t, d, bytes.Repeat([]byte{7}, 32)) // freed by the test cleanup
	m := New(32)
	fill(m.MutableCPUData(), 3)
	if err := m.SetGPUData(p); err != nil {
		t.Fatal(err)
	}
	if m.Head() != HeadAtGPU {
		t.Errorf("after SetGPUData: head %v, want HEAD_AT_GPU", m.Head())
	}
	if got := m.CPUData(); !allEqual(got, 7) {
		t.Errorf("CPUData after adopting a device buffer: %v", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Still ours: readable, and freeing it at cleanup must not fail.
	if got := cudatest.Download(t, d, p, 32); !allEqual(got, 7) {
		t.Errorf("adopted buffer changed after Close: %v", got)
	}
	if err := d.Free(p); err != nil {
		t.Errorf("the adopted buffer was freed by Close: %v", err)
	}
}

// A memory larger than the device buffer it shares (a blob that grew,
// sharing a batch's smaller buffer) copies only what the buffer holds,
// both ways.
func TestSharedSmallerGPUData(t *testing.T) {
	d := cudatest.Device(t)
	p := cudatest.Upload(t, d, bytes.Repeat([]byte{7}, 16)) // freed by the test cleanup
	m := New(48)
	if err := m.SetSharedGPUData(p, 16); err != nil {
		t.Fatal(err)
	}
	got := m.CPUData()
	if !allEqual(got[:16], 7) {
		t.Errorf("CPUData of a shared 16-byte buffer: %v", got[:16])
	}
	fill(m.MutableCPUData()[:16], 5)
	if _, err := m.GPUData(); err != nil {
		t.Fatalf("pushing back into the shared buffer: %v", err)
	}
	if got := cudatest.Download(t, d, p, 16); !allEqual(got, 5) {
		t.Errorf("shared buffer after the push: %v", got)
	}
}

func TestCloseFreesDeviceMemory(t *testing.T) {
	d := cudatest.Device(t)
	// Free memory is device-wide and other test processes (go test runs
	// packages in parallel) allocate at the same time, so the check allows
	// them a quarter of a large allocation.
	const size, slack = 1 << 30, 1 << 28
	before, _, _ := d.MemInfo()
	m := New(size)
	if _, err := m.GPUData(); err != nil {
		t.Fatal(err)
	}
	during, _, _ := d.MemInfo()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	after, _, _ := d.MemInfo()
	if before-during < size-slack || after < during+size-slack {
		t.Errorf("free memory %d -> %d -> %d: Close did not give the %d bytes back", before, during, after, size)
	}
	if m.Head() != Uninitialized {
		t.Errorf("head after Close: %v", m.Head())
	}
}

func TestZeroSizeOnGPU(t *testing.T) {
	cudatest.Device(t)
	m := New(0)
	if _, err := m.GPUData(); err != nil {
		t.Errorf("GPUData of a zero-size memory: %v", err)
	}
	if len(m.CPUData()) != 0 {
		t.Error("zero-size memory has host bytes")
	}
}
