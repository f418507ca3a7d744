package syncedmem

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
)

func TestStorageNames(t *testing.T) {
	for s, want := range map[Storage]string{
		StorageNative:   "native",
		StorageFloat16:  "FLOAT16",
		StorageBFloat16: "BFLOAT16",
		Storage(7):      "Storage(7)",
	} {
		if got := s.String(); got != want {
			t.Errorf("Storage(%d).String() = %q, want %q", int(s), got, want)
		}
	}
	if StorageNative.Reduced() || !StorageFloat16.Reduced() || !StorageBFloat16.Reduced() || Storage(7).Reduced() {
		t.Error("Reduced is wrong")
	}
}

func TestSetStorageHostOnly(t *testing.T) {
	for _, s := range []Storage{StorageFloat16, StorageBFloat16} {
		m := New(40)
		if m.Storage() != StorageNative || m.DeviceSize() != 40 {
			t.Fatalf("new memory: storage %v, device size %d", m.Storage(), m.DeviceSize())
		}
		if err := m.SetStorage(s); err != nil {
			t.Fatalf("SetStorage(%v) of host-only memory: %v", s, err)
		}
		if m.Storage() != s {
			t.Errorf("storage %v, want %v", m.Storage(), s)
		}
		if m.DeviceSize() != 20 || m.Size() != 40 {
			t.Errorf("%v: device size %d, size %d; want 20, 40", s, m.DeviceSize(), m.Size())
		}
		if m.Head() != Uninitialized {
			t.Errorf("SetStorage of untouched memory: head %v, want UNINITIALIZED", m.Head())
		}
		if err := m.SetStorage(s); err != nil { // same again: no-op
			t.Errorf("SetStorage(%v) twice: %v", s, err)
		}
		// Host data and head are untouched by a change of storage.
		f := float32s(m.MutableCPUData(), 10)
		f[3] = 0.1
		if err := m.SetStorage(StorageNative); err != nil {
			t.Fatal(err)
		}
		if m.Head() != HeadAtCPU || float32s(m.CPUData(), 10)[3] != 0.1 {
			t.Errorf("after SetStorage(native) of host data: head %v, value %g", m.Head(), float32s(m.CPUData(), 10)[3])
		}
		if m.DeviceSize() != 40 {
			t.Errorf("native device size %d, want 40", m.DeviceSize())
		}
		// Close keeps the setting.
		m.SetStorage(s)
		m.Close()
		if m.Storage() != s {
			t.Errorf("Close reset the storage to %v", m.Storage())
		}
	}
}

func TestSetStorageRefusesOddSizes(t *testing.T) {
	for _, n := range []int{1, 2, 6, 10} {
		m := New(n)
		err := m.SetStorage(StorageFloat16)
		if err == nil || !strings.Contains(err.Error(), "multiple of 4") {
			t.Errorf("SetStorage(FLOAT16) of %d bytes: err = %v, want one about the size", n, err)
		}
		if m.Storage() != StorageNative || m.DeviceSize() != n {
			t.Errorf("refused SetStorage changed the memory: %v, %d", m.Storage(), m.DeviceSize())
		}
	}
	if err := New(0).SetStorage(StorageBFloat16); err != nil {
		t.Errorf("SetStorage of an empty memory: %v", err)
	}
	if err := New(8).SetStorage(Storage(5)); err == nil {
		t.Error("SetStorage(Storage(5)) succeeded")
	}
}

// Without CUDA a reduced memory's device calls fail like a native one's.
func TestReducedDeviceCallsWithoutCUDA(t *testing.T) {
	if cuda.Available() {
		t.Skip("built with CUDA")
	}
	m := New(16)
	if err := m.SetStorage(StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	float32s(m.MutableCPUData(), 4)[1] = 2.5
	if _, err := m.GPUData(); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("GPUData: err = %v, want ErrNoCUDA", err)
	}
	if err := m.AsyncGPUPush(nil); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("AsyncGPUPush: err = %v, want ErrNoCUDA", err)
	}
	if m.Head() != HeadAtCPU || float32s(m.CPUData(), 4)[1] != 2.5 {
		t.Errorf("failed device calls disturbed the memory: head %v", m.Head())
	}
}
