package syncedmem

import (
	"bytes"
	"testing"
	"unsafe"

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

// storageValues are float32s that FLOAT16 and BFLOAT16 round differently,
// with values at the edges of the formats.
var storageValues = []float32{1, -2.5, 0.1, 65504, 70000, 1e-7, -3.3e38, 0.333333}

// narrowed returns vals as the device holds them in storage s, and the
// float32 values those widen back to.
func narrowed(vals []float32, s Storage) ([]uint16, []float32) {
	h := make([]uint16, len(vals))
	Narrow(h, vals, s)
	f := make([]float32, len(vals))
	Widen(f, h, s)
	return h, f
}

func TestReducedStorageGPU(t *testing.T) {
	d := cudatest.Device(t)
	for _, s := range []Storage{StorageBFloat16, StorageFloat16} {
		n := len(storageValues)
		m := New(4 * n)
		copy(float32s(m.MutableCPUData(), n), storageValues)
		if err := m.SetStorage(s); err != nil {
			t.Fatal(err)
		}
		p, err := m.GPUData()
		if err != nil {
			t.Fatalf("%v: GPUData: %v", s, err)
		}
		if m.Head() != Synced {
			t.Errorf("%v: after GPUData of host data: head %v, want SYNCED", s, m.Head())
		}
		wantBits, wantVals := narrowed(storageValues, s)
		if got := cudatest.Download(t, d, p, 2*n); !bytes.Equal(got, uint16Bytes(wantBits)) {
			t.Errorf("%v: device copy % x, want % x", s, got, uint16Bytes(wantBits))
		}
		// The host copy is still the exact values until the device is
		// written.
		if got := float32s(m.CPUData(), n); got[2] != 0.1 {
			t.Errorf("%v: SYNCED host copy changed: %v", s, got)
		}
		if _, err := m.MutableGPUData(); err != nil {
			t.Fatal(err)
		}
		if m.Head() != HeadAtGPU {
			t.Errorf("%v: head %v, want HEAD_AT_GPU", s, m.Head())
		}
		got := float32s(m.CPUData(), n)
		if m.Head() != Synced {
			t.Errorf("%v: after CPUData: head %v, want SYNCED", s, m.Head())
		}
		for i := range got {
			if got[i] != wantVals[i] {
				t.Errorf("%v: element %d: %g back from the device, want %g (%g rounded)", s, i, got[i], wantVals[i], storageValues[i])
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A reduced memory's device copy is zero filled on first allocation.
func TestReducedStorageZeroFillGPU(t *testing.T) {
	d := cudatest.Device(t)
	m := New(1 << 20)
	defer m.Close()
	if err := m.SetStorage(StorageFloat16); err != nil {
		t.Fatal(err)
	}
	float32s(m.MutableCPUData(), 4)[0] = 9 // allocated host copy
	m.Close()                              // back to UNINITIALIZED, storage kept
	p, err := m.MutableGPUData()
	if err != nil {
		t.Fatal(err)
	}
	if got := cudatest.Download(t, d, p, m.DeviceSize()); !allEqual(got, 0) {
		t.Error("device copy of a FLOAT16 memory not zero filled")
	}
	if got := float32s(m.CPUData(), m.Size()/4); got[0] != 0 || got[len(got)-1] != 0 {
		t.Errorf("host copy of zeroed FLOAT16 device memory: %g ... %g", got[0], got[len(got)-1])
	}
}

// Changing the storage of memory whose device copy is current keeps its
// values: they come to the host first.
func TestSetStorageKeepsDeviceValues(t *testing.T) {
	d := cudatest.Device(t)
	n := len(storageValues)
	m := New(4 * n)
	defer m.Close()
	p, err := m.MutableGPUData()
	if err != nil {
		t.Fatal(err)
	}
	// Write the device copy directly: the host copy knows nothing of it.
	src := make([]float32, n)
	copy(src, storageValues)
	if err := d.CopyHtoD(p, unsafeBytes(src)); err != nil {
		t.Fatal(err)
	}
	if m.Head() != HeadAtGPU {
		t.Fatalf("head %v, want HEAD_AT_GPU", m.Head())
	}
	if err := m.SetStorage(StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if m.Head() != HeadAtCPU {
		t.Errorf("after SetStorage at HEAD_AT_GPU: head %v, want HEAD_AT_CPU", m.Head())
	}
	if _, ok := m.DeviceBuffer(); ok {
		t.Error("SetStorage kept the device copy of the old storage")
	}
	got := float32s(m.CPUData(), n)
	for i := range got {
		if got[i] != storageValues[i] {
			t.Errorf("element %d: %g after SetStorage, want %g", i, got[i], storageValues[i])
		}
	}
	// Through the BFLOAT16 device copy and back: rounded.
	if _, err := m.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	_, want := narrowed(storageValues, StorageBFloat16)
	// And back to native from HEAD_AT_GPU: the rounded values stay.
	if err := m.SetStorage(StorageNative); err != nil {
		t.Fatal(err)
	}
	got = float32s(m.CPUData(), n)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("element %d: %g after BFLOAT16 and back, want %g", i, got[i], want[i])
		}
	}
	p, err = m.GPUData()
	if err != nil {
		t.Fatal(err)
	}
	if dev := cudatest.Download(t, d, p, 4*n); !bytes.Equal(dev, unsafeBytes(want)) {
		t.Error("native device copy after SetStorage(native) differs from the host copy")
	}
}

// Borrowed device memory cannot be released: SetStorage refuses and changes
// nothing.
func TestSetStorageRefusesBorrowedGPU(t *testing.T) {
	d := cudatest.Device(t)
	p := cudatest.Upload(t, d, bytes.Repeat([]byte{0}, 32)) // freed by the test cleanup
	m := New(32)
	defer m.Close()
	if err := m.SetGPUData(p); err != nil {
		t.Fatal(err)
	}
	if err := m.SetStorage(StorageFloat16); err == nil {
		t.Error("SetStorage of borrowed device memory succeeded")
	}
	if m.Storage() != StorageNative || m.Head() != HeadAtGPU || !m.BorrowsDevice() {
		t.Errorf("refused SetStorage changed the memory: storage %v, head %v", m.Storage(), m.Head())
	}
}

func TestReducedAsyncGPUPush(t *testing.T) {
	d := cudatest.Device(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := len(storageValues)
	m := New(4 * n)
	m.SetDevice(d)
	defer m.Close()
	if err := m.SetStorage(StorageFloat16); err != nil {
		t.Fatal(err)
	}
	copy(float32s(m.MutableCPUData(), n), storageValues)
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
	want, _ := narrowed(storageValues, StorageFloat16)
	if got := cudatest.Download(t, d, p, 2*n); !bytes.Equal(got, uint16Bytes(want)) {
		t.Errorf("async push of FLOAT16: device % x, want % x", got, uint16Bytes(want))
	}
}

func unsafeBytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}
